// Search latency by number of modules, each point in a fresh database.
import process from 'node:process';
import {
  DEMO_COMMON_WORD as COMMON_WORD,
  DEMO_RARE_WORD as RARE_WORD,
} from '../../../dist/src/database/demo-data.js';
import { bareSearchIndexes, seed } from '../data.js';
import { load, login, proveEqual } from '../measure.js';
import { ADMIN_PASSWORD, log } from '../options.js';
import { createDatabase, startServers } from '../servers.js';

/** Search latency with one connection (no queueing) at a number of modules; users stay at 5 000. */
export async function curvePoint(serverUrl, scale, seconds, jwtSecret) {
  const databaseUrl = await createDatabase(serverUrl, `mas_bench_curve_${scale}_${process.pid}`);
  const servers = await startServers(databaseUrl, jwtSecret);
  const seeded = await seed(databaseUrl, { scale, usersScale: 5, withRoles: false });
  await bareSearchIndexes(databaseUrl);
  const token = await login(servers.service.url, 'admin', ADMIN_PASSWORD);
  const headers = { authorization: `Bearer ${token}` };
  const point = { modules: seeded.modules, seedSeconds: seeded.seconds };
  for (const [key, path] of [
    ['rare', `/api/modules?query=${RARE_WORD}`],
    ['common', `/api/modules?query=${COMMON_WORD}&sort=-year,code`],
  ]) {
    const route = { route: `${key} word at ${seeded.modules}`, path, headers };
    await proveEqual(servers, route);
    point[key] = {};
    for (const side of ['service', 'bare']) {
      await load(servers[side].url, route, 1, 1);
      point[key][side] = await load(servers[side].url, route, seconds, 1);
    }
    log(`${route.route}: p50 service ${point[key].service.p50} ms, bare ${point[key].bare.p50} ms`);
  }
  await servers.service.stop();
  await servers.bare.stop();
  return point;
}
