/** FLEET_BENCH_NODE_ARGS: node flags for the platform process a bench starts, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" or "--perf-basic-prof". */
export function benchNodeArgs(): string[] {
  return process.env.FLEET_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
}
