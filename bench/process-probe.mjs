// Loaded into a benchmarked server (node --import): on SIGUSR2 it collects garbage (when run with
// --expose-gc) and prints the process's memory and CPU time as one JSON line, read by bench/probe.ts.
// CPU time is taken on both sides of the collection, so that a measured window leaves the probes' own
// collections out.
process.on("SIGUSR2", () => {
  const cpuBeforeGc = process.cpuUsage();
  global.gc?.();
  global.gc?.();
  process.stdout.write(`${JSON.stringify({ probe: { memory: process.memoryUsage(), cpu: process.cpuUsage(), cpuBeforeGc } })}\n`);
});
