// Command-line bridge to @noble/post-quantum, an independent SLH-DSA implementation, so that the
// interoperability tests (test_noble.c) can stay in C. Input and output are JSON lines:
//
//   node noble.mjs verify FILE [--jobs=N]
//     each input line: {"alg","iface","prehash","pk","msg","ctx","sig"} (hex byte strings)
//     each output line: "1" (valid), "0" (invalid) or "E <why noble could not handle it>"
//   node noble.mjs sign FILE [--jobs=N]
//     each input line: {"alg","iface","prehash","seed","msg","ctx","addrnd"}
//       seed   = SK.seed || SK.prf || PK.seed (3n bytes), given to noble's keygen
//       addrnd = "" for deterministic signing (opt_rand = PK.seed), n bytes of hex for hedged
//                signing with that opt_rand, or null / absent for noble's own randomness
//       keygen_only = true (optional): only run keygen; the output line then has no "sig"
//     each output line: {"pk","sk","sig"} or "E <why>"
//   node noble.mjs version
//
// alg is a FIPS 205 name ("SLH-DSA-SHAKE-192f"); iface is "pure", "prehash" or "internal";
// prehash is "none" or an ACVP hash name ("SHA2-512/224", "SHAKE-128", ...). For "internal",
// msg is M' itself and ctx must be empty. FILE may be "-" for standard input. Output lines are
// in input order. A summary goes to standard error. Exit status 0 once every line is answered
// (E lines included), 2 on a usage or input error.
//
// Pre-hash: noble's prehash(hash) refuses a hash whose collision strength is below the
// parameter set's security level (e.g. SHA2-256 with a 192-bit set), which FIPS 205 allows and
// ACVP tests. For those pairs the helper still uses noble's own M' construction
// (getMessagePrehash: 0x01 || len(ctx) || ctx || OID || PH(M)) and noble's internal sign and
// verify; the summary counts how many cases took that route.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import * as slh from '@noble/post-quantum/slh-dsa.js';
import { getMessagePrehash } from '@noble/post-quantum/utils.js';
import { sha224, sha256, sha384, sha512, sha512_224, sha512_256 } from '@noble/hashes/sha2.js';
import { sha3_224, sha3_256, sha3_384, sha3_512, shake128_32, shake256_64 } from '@noble/hashes/sha3.js';

// FIPS 205 section 10.2 fixes the XOF output lengths: SHAKE128 gives 256 bits, SHAKE256 512.
const PREHASH = {
  'SHA2-224': sha224,
  'SHA2-256': sha256,
  'SHA2-384': sha384,
  'SHA2-512': sha512,
  'SHA2-512/224': sha512_224,
  'SHA2-512/256': sha512_256,
  'SHA3-224': sha3_224,
  'SHA3-256': sha3_256,
  'SHA3-384': sha3_384,
  'SHA3-512': sha3_512,
  'SHAKE-128': shake128_32,
  'SHAKE-256': shake256_64,
};

function algorithm(name) {
  const m = /^SLH-DSA-(SHA2|SHAKE)-(128|192|256)([sf])$/.exec(String(name));
  if (!m) throw new Error(`unknown parameter set ${JSON.stringify(name)}`);
  return slh[`slh_dsa_${m[1].toLowerCase()}_${m[2]}${m[3]}`];
}

function unhex(s, what) {
  if (typeof s !== 'string' || s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s))
    throw new Error(`${what}: expected a hex string`);
  return Uint8Array.from(Buffer.from(s, 'hex'));
}

const hex = (b) => Buffer.from(b).toString('hex');

// noble's prehash signer per (set, hash), or null where noble's policy refuses the pair.
const prehashCache = new Map();
function prehashSigner(alg, algName, hashName) {
  const key = `${algName} ${hashName}`;
  if (prehashCache.has(key)) return prehashCache.get(key);
  let signer = null;
  try {
    signer = alg.prehash(PREHASH[hashName]);
  } catch (e) {
    // Only the strength policy is worked around; any other refusal is a real problem.
    if (!/strength too low/.test(String(e && e.message))) throw e;
  }
  prehashCache.set(key, signer);
  return signer;
}

// Resolves a case into the noble calls to make. route names the path taken, for the summary.
function plan(c) {
  const alg = algorithm(c.alg);
  const msg = unhex(c.msg, 'msg');
  const ctx = unhex(c.ctx ?? '', 'ctx');
  const ph = c.prehash ?? 'none';
  if (c.iface === 'pure' || c.iface === 'internal') {
    if (ph !== 'none') throw new Error(`iface ${c.iface} with prehash ${ph}`);
    if (c.iface === 'internal') {
      if (ctx.length) throw new Error('iface internal takes no context');
      return { alg, route: 'internal', signer: alg.internal, msg, opts: {} };
    }
    return { alg, route: 'pure', signer: alg, msg, opts: { context: ctx } };
  }
  if (c.iface !== 'prehash') throw new Error(`unknown iface ${JSON.stringify(c.iface)}`);
  if (!Object.hasOwn(PREHASH, ph)) throw new Error(`unknown prehash ${JSON.stringify(ph)}`);
  const signer = prehashSigner(alg, c.alg, ph);
  if (signer) return { alg, route: 'prehash', signer, msg, opts: { context: ctx } };
  if (ctx.length > 255) throw new Error('context over 255 bytes');
  const mp = getMessagePrehash(PREHASH[ph], msg, ctx);
  return { alg, route: 'prehash-via-internal', signer: alg.internal, msg: mp, opts: {} };
}

function verifyCase(c) {
  const p = plan(c);
  const ok = p.signer.verify(unhex(c.sig, 'sig'), p.msg, unhex(c.pk, 'pk'), p.opts);
  return { line: ok ? '1' : '0', route: p.route };
}

function signCase(c) {
  if (c.keygen_only === true) {
    const { secretKey, publicKey } = algorithm(c.alg).keygen(unhex(c.seed, 'seed'));
    return { line: JSON.stringify({ pk: hex(publicKey), sk: hex(secretKey) }), route: 'keygen' };
  }
  const p = plan(c);
  const { secretKey, publicKey } = p.alg.keygen(unhex(c.seed, 'seed'));
  let extraEntropy; // undefined: noble draws its own randomness
  if (c.addrnd === '') extraEntropy = false;
  else if (c.addrnd !== undefined && c.addrnd !== null) extraEntropy = unhex(c.addrnd, 'addrnd');
  const sig = p.signer.sign(p.msg, secretKey, { ...p.opts, extraEntropy });
  const line = JSON.stringify({ pk: hex(publicKey), sk: hex(secretKey), sig: hex(sig) });
  return { line, route: p.route };
}

function runCase(op, text) {
  try {
    const c = JSON.parse(text);
    return op === 'sign' ? signCase(c) : verifyCase(c);
  } catch (e) {
    const why = String((e && e.message) || e).replace(/\s+/g, ' ');
    return { line: `E ${why}`, route: 'error' };
  }
}

// Rough relative cost, so the slowest cases start first and the workers finish together.
function cost(op, text) {
  const m = /SLH-DSA-(SHA2|SHAKE)-(128|192|256)([sf])/.exec(text);
  if (!m) return 0;
  const base = (m[1] === 'SHAKE' ? 3 : 1) * (Number(m[2]) / 128);
  if (op !== 'sign') return base;
  if (/"keygen_only":\s*true/.test(text)) return base * (m[3] === 's' ? 2 : 0.1);
  return base * (m[3] === 's' ? 20 : 1);
}

function usage() {
  process.stderr.write('usage: node noble.mjs verify|sign FILE [--jobs=N] | version\n');
  process.exit(2);
}

function nobleVersion() {
  const url = new URL('./node_modules/@noble/post-quantum/package.json', import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')).version;
}

async function main() {
  const args = process.argv.slice(2);
  const op = args[0];
  if (op === 'version') {
    console.log(nobleVersion());
    return;
  }
  if ((op !== 'sign' && op !== 'verify') || args.length < 2) usage();
  let jobs = Math.min(availableParallelism(), 16);
  for (const a of args.slice(2)) {
    const m = /^--jobs=(\d+)$/.exec(a);
    if (!m || Number(m[1]) < 1) usage();
    jobs = Number(m[1]);
  }
  let input;
  try {
    input = readFileSync(args[1] === '-' ? 0 : args[1], 'utf8');
  } catch (e) {
    process.stderr.write(`noble.mjs: cannot read ${args[1]}: ${e.message}\n`);
    process.exit(2);
  }
  const lines = input.split('\n').filter((l) => l.trim() !== '');
  const t0 = performance.now();
  const results = new Array(lines.length);
  let written = 0;
  // process.stdout is synchronous for files and, on Linux, for pipes, so lines are not lost
  // or interleaved; a partial fs.writeSync to a non-blocking pipe would be.
  const flush = () => {
    while (written < lines.length && results[written] !== undefined)
      process.stdout.write(results[written++].line + '\n');
  };
  jobs = Math.max(1, Math.min(jobs, lines.length));
  if (jobs === 1) {
    for (let i = 0; i < lines.length; i++) {
      results[i] = runCase(op, lines[i]);
      flush();
    }
  } else {
    await runWorkers(op, lines, jobs, results, flush);
  }
  const routes = {};
  for (const r of results) routes[r.route] = (routes[r.route] || 0) + 1;
  const parts = Object.entries(routes).map(([k, v]) => `${v} ${k}`).join(', ');
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  process.stderr.write(
    `noble ${nobleVersion()} ${op}: ${lines.length} cases (${parts || 'none'}), ` +
      `${jobs} thread(s), ${secs} s\n`,
  );
}

// Hands out cases one at a time, costliest first, to `jobs` worker threads.
function runWorkers(op, lines, jobs, results, flush) {
  const order = lines.map((_, i) => i);
  order.sort((a, b) => cost(op, lines[b]) - cost(op, lines[a]) || a - b);
  let next = 0;
  let live = jobs;
  return new Promise((resolve, reject) => {
    for (let w = 0; w < jobs; w++) {
      const worker = new Worker(new URL(import.meta.url));
      const feed = () => {
        if (next < order.length) {
          const i = order[next++];
          worker.postMessage({ i, op, text: lines[i] });
        } else {
          worker.terminate();
          if (--live === 0) resolve();
        }
      };
      worker.on('message', ({ i, result }) => {
        results[i] = result;
        flush();
        feed();
      });
      worker.on('error', reject);
      feed();
    }
  });
}

if (isMainThread) {
  main().catch((e) => {
    process.stderr.write(`noble.mjs: ${(e && e.stack) || e}\n`);
    process.exit(2);
  });
} else {
  parentPort.on('message', ({ i, op, text }) => {
    parentPort.postMessage({ i, result: runCase(op, text) });
  });
}
