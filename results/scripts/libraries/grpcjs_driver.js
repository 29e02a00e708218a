// @grpc/grpc-js calling herdsim serve's /herdsim.Herdsim/Call with the
// retry policy and retry throttling of a service config, passed as the
// channel's `grpc.service_config` option: the library's own retries.
// Poisson arrivals at --rate for --duration (open loop), one x-call-id per
// call; writes the client's record (call, start_ms, end_ms, outcome).
'use strict';
const fs = require('fs');
const grpc = require('@grpc/grpc-js');

function args() {
  const out = { seed: 1 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['port', 'rate', 'duration', 'out', 'config']) {
    if (out[k] === undefined) { console.error(`--${k} is required`); process.exit(2); }
  }
  return out;
}

// A small seeded generator (mulberry32), for the arrival times.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function main() {
  const a = args();
  const rate = Number(a.rate), duration = Number(a.duration);
  const serviceConfig = fs.readFileSync(a.config, 'utf8');
  const client = new grpc.Client(`127.0.0.1:${a.port}`, grpc.credentials.createInsecure(), {
    'grpc.service_config': serviceConfig,
  });
  const identity = (b) => b;
  const random = rng(Number(a.seed));
  const times = [];
  for (let t = 0; times.length < 100000;) {
    t += -Math.log(1 - random()) / rate;
    if (t >= duration) break;
    times.push(t);
  }
  const rows = [];
  const start = process.hrtime.bigint();
  const now = () => Number(process.hrtime.bigint() - start) / 1e9;
  let sent = 0, ended = 0;
  const finish = () => {
    rows.sort((x, y) => x[1] - y[1]);
    const lines = ['call,start_ms,end_ms,outcome'];
    for (const [id, s, e, o] of rows) lines.push(`${id},${(s * 1e3).toFixed(3)},${(e * 1e3).toFixed(3)},${o}`);
    fs.writeFileSync(a.out, lines.join('\n') + '\n');
    client.close();
    console.log(`grpc-js ${require('@grpc/grpc-js/package.json').version}: ${times.length} calls, ${ended} ended`);
    process.exit(0);
  };
  const giveUp = setTimeout(finish, (duration + 30) * 1000);
  const send = () => {
    while (sent < times.length && times[sent] <= now()) {
      const id = `js-${sent}-${Math.floor(random() * 1e9)}`;
      const started = now();
      const metadata = new grpc.Metadata();
      metadata.set('x-call-id', id);
      client.makeUnaryRequest('/herdsim.Herdsim/Call', identity, identity, Buffer.from('herdsim'),
        metadata, {}, (err) => {
          const outcome = err ? (grpc.status[err.code] || String(err.code)).toLowerCase() : 'success';
          rows.push([id, started, now(), outcome]);
          ended += 1;
          if (ended === times.length) { clearTimeout(giveUp); finish(); }
        });
      sent += 1;
    }
    if (sent < times.length) setTimeout(send, Math.max(0, (times[sent] - now()) * 1000));
  };
  client.waitForReady(Date.now() + 10000, (err) => {
    if (err) { console.error(`cannot connect: ${err.message}`); process.exit(1); }
    send();
  });
}

main();
