#!/usr/bin/env bash
# step: every Kubernetes manifest in deploy/k8s/ is valid against the schemas shipped by the kubernetes-models npm package
set -euo pipefail
cd "$(dirname "$0")/../.."
node --test test/scale/k8s-manifests.test.js
