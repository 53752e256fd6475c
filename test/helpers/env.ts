/**
 * What the environment of a test run passes on to every service the tests start, in this process
 * or another: `FAST_PATHS=off vitest run` runs the whole suite with the fast paths off. A test's
 * own settings win over these.
 */
const PASSED = ["FAST_PATHS"] as const;

export function passedEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
