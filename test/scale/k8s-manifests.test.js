// Validates every manifest in deploy/k8s/ against the Kubernetes API schemas that the npm package
// kubernetes-models ships (generated from the Kubernetes OpenAPI document; nothing is fetched at run time),
// then checks what the deployment promises: probes, shutdown timing, limits, non-root, read-only root.
// Run with `node --test test/scale/k8s-manifests.test.js` (CI: .ci/steps/61-k8s-manifests.sh).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';

const DIR = path.resolve(import.meta.dirname, '../../deploy/k8s');
/** How long the service drains requests after SIGTERM (SHUTDOWN_GRACE_MS in src/app.ts). */
const DRAIN_SECONDS = 10;

/** The model class for a manifest's apiVersion and kind, e.g. kubernetes-models/apps/v1/Deployment. */
async function modelOf({ apiVersion, kind }) {
  const module = await import(`kubernetes-models/${apiVersion}/${kind}`).catch(() => undefined);
  assert.ok(module?.[kind], `no schema for ${apiVersion} ${kind}`);
  return module[kind];
}

async function validate(manifest) {
  const Model = await modelOf(manifest);
  new Model(manifest).validate();
}

async function loadManifests() {
  const kustomization = parseAllDocuments(
    await readFile(path.join(DIR, 'kustomization.yaml'), 'utf8'),
  )[0].toJS();
  const files = (await readdir(DIR)).filter(
    (name) => name.endsWith('.yaml') && name !== 'kustomization.yaml',
  );
  const manifests = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(path.join(DIR, file), 'utf8'))) {
      assert.deepEqual(document.errors, [], `${file} is not valid YAML`);
      manifests.push({ file, manifest: document.toJS() });
    }
  }
  return { kustomization, files, manifests };
}

const { kustomization, files, manifests } = await loadManifests();
const byKind = (kind) =>
  manifests.filter(({ manifest }) => manifest.kind === kind).map(({ manifest }) => manifest);
const one = (kind) => {
  const found = byKind(kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0];
};

void test('the kustomization lists every manifest file, and only existing ones', () => {
  assert.equal(kustomization.kind, 'Kustomization');
  assert.deepEqual([...kustomization.resources].sort(), [...files].sort());
});

void test('every manifest is valid against the Kubernetes schemas', async () => {
  assert.ok(manifests.length >= 8);
  for (const { file, manifest } of manifests) {
    await assert.doesNotReject(validate(manifest), `${file}: ${manifest.kind}`);
  }
});

void test('the checker rejects what the schemas forbid (it is not a no-op)', async () => {
  const deployment = globalThis.structuredClone(one('Deployment'));
  deployment.spec.replicas = 'two';
  await assert.rejects(validate(deployment), /replicas must be integer/);
  const job = globalThis.structuredClone(one('Job'));
  delete job.spec.template.spec.containers;
  await assert.rejects(validate(job), /containers/);
  await assert.rejects(modelOf({ apiVersion: 'apps/v1', kind: 'Deploymnet' }), /no schema/);
});

void test('the Deployment: probes, shutdown timing, resources, non-root, read-only root with a writable /tmp', () => {
  const deployment = one('Deployment');
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  assert.equal(container.livenessProbe.httpGet.path, '/api/health');
  assert.equal(container.readinessProbe.httpGet.path, '/api/health/ready');
  assert.ok(container.startupProbe.httpGet.path);
  const preStop = container.lifecycle.preStop.sleep.seconds;
  assert.ok(preStop > 0);
  assert.ok(
    pod.terminationGracePeriodSeconds > preStop + DRAIN_SECONDS,
    'the grace period outlasts the preStop pause plus the drain',
  );
  for (const kind of ['requests', 'limits'])
    for (const resource of ['cpu', 'memory'])
      assert.ok(container.resources[kind][resource], `${kind}.${resource}`);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  const tmp = container.volumeMounts.find((mount) => mount.mountPath === '/tmp');
  assert.ok(pod.volumes.find((volume) => volume.name === tmp?.name)?.emptyDir, '/tmp is an emptyDir');
  const sources = container.envFrom.map((source) => (source.configMapRef ?? source.secretRef).name);
  assert.deepEqual(sources.sort(), [one('ConfigMap').metadata.name, one('Secret').metadata.name].sort());
});

void test('Service, PodDisruptionBudget and autoscaler point at the Deployment and its pods', () => {
  const deployment = one('Deployment');
  const labels = deployment.spec.template.metadata.labels;
  const matches = (selector) => Object.entries(selector).every(([key, value]) => labels[key] === value);
  assert.ok(matches(one('Service').spec.selector));
  assert.ok(matches(one('PodDisruptionBudget').spec.selector.matchLabels));
  assert.ok(matches(deployment.spec.selector.matchLabels));
  const hpa = one('HorizontalPodAutoscaler');
  assert.deepEqual(hpa.spec.scaleTargetRef, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: deployment.metadata.name,
  });
  assert.ok(hpa.spec.minReplicas >= 2);
  const service = one('Service');
  const port = deployment.spec.template.spec.containers[0].ports.find(
    (p) => p.name === service.spec.ports[0].targetPort,
  );
  assert.ok(port, 'the Service targets a named container port');
});

void test('behind the ingress: client addresses from one proxy hop, and only the ingress reaches the port', () => {
  assert.equal(one('ConfigMap').data.TRUST_PROXY, '1');
  const policy = one('NetworkPolicy');
  const labels = one('Deployment').spec.template.metadata.labels;
  assert.ok(
    Object.entries(policy.spec.podSelector.matchLabels).every(([key, value]) => labels[key] === value),
  );
  assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
  assert.equal(policy.spec.ingress.length, 1);
  const [rule] = policy.spec.ingress;
  assert.deepEqual(rule.ports, [{ protocol: 'TCP', port: 'http' }]);
  assert.equal(rule.from.length, 1);
  assert.ok(rule.from[0].namespaceSelector?.matchLabels, 'admits one namespace (the ingress controller)');
  assert.equal(rule.from[0].ipBlock, undefined);
});

void test('egress: DNS, PostgreSQL and HTTPS to public addresses, nothing else', () => {
  const policy = one('NetworkPolicy');
  const ports = policy.spec.egress.map((rule) => rule.ports.map((p) => `${p.protocol}/${p.port}`).join(','));
  assert.deepEqual(ports, ['UDP/53,TCP/53', 'TCP/5432', 'TCP/443']);
  const https = policy.spec.egress[2].to;
  assert.ok(
    https.every((peer) => peer.ipBlock),
    'HTTPS by address only',
  );
  const excepted = https.flatMap((peer) => peer.ipBlock.except);
  for (const block of [
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.0.0/16',
    '169.254.0.0/16',
    '127.0.0.0/8',
    'fc00::/7',
  ])
    assert.ok(excepted.includes(block), `HTTPS not to ${block}`);
});

void test('files outlive a pod and are shared by the replicas: STORAGE_DIR on a ReadWriteMany claim', () => {
  const pod = one('Deployment').spec.template.spec;
  const [container] = pod.containers;
  const storageDir = container.env.find((entry) => entry.name === 'STORAGE_DIR')?.value;
  assert.ok(storageDir && !storageDir.startsWith('/tmp'), 'STORAGE_DIR is not on the scratch emptyDir');
  const mount = container.volumeMounts.find((entry) => entry.mountPath === storageDir);
  const volume = pod.volumes.find((entry) => entry.name === mount?.name);
  const claim = one('PersistentVolumeClaim');
  assert.equal(volume?.persistentVolumeClaim?.claimName, claim.metadata.name);
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany']);
});

void test('Secret, ConfigMap and migration Job carry the settings the service reads', () => {
  assert.deepEqual(Object.keys(one('Secret').stringData).sort(), ['DATABASE_URL', 'JWT_SECRET']);
  const config = one('ConfigMap').data;
  for (const key of [
    'REDIS_URL',
    'STORAGE_S3_BUCKET',
    'STORAGE_S3_ENDPOINT',
    'STORAGE_S3_REGION',
    'STORAGE_S3_FORCE_PATH_STYLE',
  ])
    assert.ok(key in config, key);
  const job = one('Job').spec.template.spec;
  assert.deepEqual(job.containers[0].command, ['node', 'dist/src/database/migrate.js']);
  assert.equal(job.restartPolicy, 'Never');
});
