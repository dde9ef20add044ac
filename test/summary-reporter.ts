/** Prints the plain closing line CI reads ("N passed, N failed, N skipped"), after vitest's own summary. */
import type { Reporter } from 'vitest/reporters';

type Task = { type: string; result?: { state?: string }; mode?: string; tasks?: Task[] };

function count(tasks: Task[], acc = { passed: 0, failed: 0, skipped: 0 }) {
  for (const t of tasks) {
    if (t.type === 'test') {
      if (t.result?.state === 'pass') acc.passed++;
      else if (t.result?.state === 'fail') acc.failed++;
      else acc.skipped++;
    } else if (t.tasks) count(t.tasks, acc);
  }
  return acc;
}

export default class SummaryReporter implements Reporter {
  onFinished(files: unknown[] = [], errors: unknown[] = []) {
    const c = count(files as Task[]);
    // A file that failed to load counts as a failure.
    const broken = (files as Task[]).filter((f) => f.result?.state === 'fail' && !(f.tasks ?? []).length).length + errors.length;
    process.stdout.write(`\n${c.passed} passed, ${c.failed + broken} failed, ${c.skipped} skipped\n`);
  }
}
