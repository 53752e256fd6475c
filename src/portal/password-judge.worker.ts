/**
 * The password judge's thread (worker_threads, started by portal-user.ts): zxcvbn-ts with the
 * common and English dictionaries, loaded once, answering one password at a time with its score
 * and advice, at the lowest CPU priority. It holds nothing else and knows nothing of requests;
 * the main thread decides how long a judgement may take and ends this thread when it takes longer.
 */
import { constants, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";

// The lowest CPU priority, for this thread only (Linux keeps a nice value per thread), set before
// the dictionaries load: while this thread loads them or judges, the service's own thread,
// answering requests, comes first.
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
