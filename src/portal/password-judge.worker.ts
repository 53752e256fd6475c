/**
 * The password judge's thread (worker_threads, started by portal-user.ts): zxcvbn-ts with the
 * common and English dictionaries, loaded once, answering one password at a time with its score
 * and advice. It holds nothing else and knows nothing of requests; the main thread limits each
 * judgement by this thread's CPU time and ends the thread when it takes more.
 *
 * It lowers its own CPU priority to the lowest (Linux keeps a nice value per thread) before it
 * loads the dictionaries, so neither loading nor judging, the part a stranger's password
 * controls, competes with the service's thread that answers requests. Because the limit is CPU
 * time and not the clock, running last on a busy machine does not make an ordinary password run
 * out of time; it only waits longer.
 */
import { constants, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";

try {
  setPriority(constants.priority.PRIORITY_LOW);
} catch {
  // Not allowed here: judged at the usual priority.
}

const [{ ZxcvbnFactory }, common, en] = await Promise.all([
  import("@zxcvbn-ts/core"),
  import("@zxcvbn-ts/language-common"),
  import("@zxcvbn-ts/language-en"),
]);
const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...common.dictionary, ...en.dictionary },
  graphs: common.adjacencyGraphs,
  translations: en.translations,
});

const port = parentPort;
if (port === null) throw new Error("the password judge runs as a worker thread");
port.on("message", ({ password, words }: { password: string; words: string[] }) => {
  const result = zxcvbn.check(password, words);
  const advice = [result.feedback.warning, ...result.feedback.suggestions].filter((t): t is string => Boolean(t));
  port.postMessage({ score: result.score, advice });
});
port.postMessage({ ready: true });
