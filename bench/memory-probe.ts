// Loaded into a benchmarked server (node --expose-gc --import): on SIGUSR2 it collects garbage and
// prints the process's memory as one JSON line, so the bench can read it from outside.
process.on("SIGUSR2", () => {
  global.gc?.();
  global.gc?.();
  process.stdout.write(`${JSON.stringify({ memory: process.memoryUsage() })}\n`);
});
