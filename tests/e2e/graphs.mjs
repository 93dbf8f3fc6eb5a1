// Random op graphs for the end-to-end tests and benchmarks of the page's views, written as the
// op-graph JSON the page and the command line read. Like the core's `fusion::random`: each op
// reads one or two recent outputs (sometimes one from up to 1,000 ops back), matmuls a weight.

import { writeFileSync } from 'node:fs';

/** A small seeded PRNG (mulberry32): the same seed gives the same graph. */
function prng(seed) {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** The ops of a random graph of `n` ops. */
export function randomOps(n, seed = 1) {
  const below = prng(seed);
  const dims = [64, 128, 256, 512, 1024];
  const ops = [];
  for (let i = 0; i < n; i++) {
    const r = below(100);
    const op_type = r < 20 ? 'matmul' : r < 65 ? 'elementwise' : r < 80 ? 'reduction' : 'reshape';
    const inputs = [];
    const nInputs = i === 0 ? 0 : 1 + below(op_type === 'matmul' ? 1 : 2);
    for (let k = 0; k < nInputs; k++) {
      const back = below(10) === 0 ? 1 + below(Math.min(i, 1000)) : 1 + below(Math.min(i, 4));
      const t = `t${i - back}`;
      if (!inputs.includes(t)) inputs.push(t);
    }
    if (op_type === 'matmul' || i === 0) inputs.push(`w${i}`);
    ops.push({ name: `op${i}`, op_type, inputs, output: `t${i}`, shape: [dims[below(5)], dims[below(5)]], bytes_per_element: 2 });
  }
  return ops;
}

/** Writes a random graph of `n` ops to `file`; returns its ops. */
export function writeRandomGraph(file, n, seed = 1) {
  const ops = randomOps(n, seed);
  writeFileSync(file, JSON.stringify({ ops }));
  return ops;
}

/** The group graph's edges ("from->to", 1-based groups) given the ops and each op's group. */
export function groupEdges(ops, opGroup) {
  const producer = new Map(ops.map((op, i) => [op.output, i]));
  const edges = new Set();
  ops.forEach((op, i) => {
    for (const t of op.inputs) {
      const p = producer.get(t);
      if (p !== undefined && opGroup[p] !== opGroup[i]) edges.add(`${opGroup[p] + 1}->${opGroup[i] + 1}`);
    }
  });
  return edges;
}
