// Preloaded into the benchmarked server (`node --import ./bench/loop-delay.mjs dist/reclib.cjs serve`):
// an event-loop delay histogram of the server process, written to stderr as one line on SIGUSR2
// and then reset. Debug-only, never part of the product: the bench's stall measurement reads it.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const ms = (ns) => Math.round((ns / 1e6) * 100) / 100;
process.on('SIGUSR2', () => {
  const line = { max: ms(histogram.max), p999: ms(histogram.percentile(99.9)), p99: ms(histogram.percentile(99)), mean: ms(histogram.mean), count: histogram.count };
  process.stderr.write(`reclib-loop-delay ${JSON.stringify(line)}\n`);
  histogram.reset();
});
