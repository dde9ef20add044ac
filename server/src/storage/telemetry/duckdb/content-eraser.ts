/**
 * Erasing recorded content from the telemetry store (docs/content-policy.md "Erasure"): every attribute
 * whose key carries a content class being erased (content-keys.ts, the one table) is removed from the
 * span, span-event and log rows in scope; everything else of the row (times, ids, the derived agent
 * columns, tokens, costs) stays. A scope is a project, the classes, and either a cut-off time (retention:
 * rows that started before it) or one subject (a session, a trace, or an end user named by `enduser.id`
 * or `user.id`), or both. A log body that is recorded content of a class being erased (its `body_class`,
 * set at ingest from the GenAI event name) is removed too: the body becomes NULL, the record stays.
 *
 * Rows are picked in SQL by a cheap substring test on the attribute JSON, then rewritten here (the key
 * table has prefixes and case-insensitive matches SQL cannot say exactly). Span rows are rewritten under
 * the trace-delete gate, so no span ingest transaction is open meanwhile.
 */
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { CONTENT_KEYS, contentClassOf, type ContentClass } from '../../../domains/content/content-keys.js';
import type { EraseCounts, EraseScope, ErasureSubjectKind, TelemetryContentEraser } from '../../../domains/content-erasure/store.js';
import type { TelemetryDb } from './open.js';
import { traceDeleteGate } from './spans-writer.js';
import { exec, rows, type Params } from './statements.js';

const PAGE = 500;

export class ContentEraser implements TelemetryContentEraser {
  constructor(private readonly db: TelemetryDb) {}

  /**
   * Whether any row in scope may hold content of the classes (the substring test only, so it can say yes
   * for a value that merely mentions a key): the scheduled erasure records an action only when it may act.
   */
  async mayHaveContent(scope: EraseScope): Promise<boolean> {
    if (scope.classes.length === 0) return false;
    return this.db.read(async (c) => {
      for (const table of TABLES) {
        const { where, p } = scopeOf(table, scope);
        if ((await rows(c, `SELECT 1 FROM ${table.from} WHERE ${where} LIMIT 1`, p)).length) return true;
      }
      const { where, p } = bodiesOf(scope);
      return (await rows(c, `SELECT 1 FROM logs l WHERE ${where} LIMIT 1`, p)).length > 0;
    });
  }

  async erase(scope: EraseScope): Promise<EraseCounts> {
    const counts: EraseCounts = { spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 };
    if (scope.classes.length === 0) return counts;
    const classes = new Set(scope.classes);
    // Content bodies of the classes first; their rows count once in `logs` with the attribute rewrites below.
    const b = bodiesOf(scope);
    const bodyRows = new Set(
      (await this.db.read((c) => rows(c, `UPDATE logs l SET body = NULL WHERE ${b.where} RETURNING log_id`, b.p))).map((r) => r[0] as string),
    );
    counts.bodies = counts.logs = bodyRows.size;
    const gate = traceDeleteGate(this.db);
    for (const table of TABLES) {
      const { where, p } = scopeOf(table, scope);
      const select = `SELECT ${table.key.map((k) => `${table.alias}.${k}`).join(', ')}, ${table.alias}.attributes FROM ${table.from} WHERE ${where}`;
      const rewrite = async (c: DuckDBConnection) => {
        let changed = 0;
        let removed = 0;
        // Every rewritten row stops matching (its content keys are gone), so the next page starts over.
        for (let offset = 0; ; ) {
          const found = await rows(c, `${select} ORDER BY ${table.key.map((k) => `${table.alias}.${k}`).join(', ')} LIMIT ${PAGE} OFFSET ${offset}`, p);
          let kept = 0;
          const changes: { key: unknown[]; json: string }[] = [];
          for (const r of found) {
            const next = withoutClasses(r[r.length - 1] as string, classes);
            if (!next) {
              kept++; // the substring matched a value, not a key: nothing to remove
              continue;
            }
            changes.push({ key: r.slice(0, table.key.length), json: next.json });
            removed += next.removed;
            if (table === LOGS && bodyRows.has(r[0] as string)) changed--;
          }
          if (changes.length) {
            // One statement a page: the new attributes joined by the row key.
            const keyParams: Params = { project: scope.projectId };
            const tuples = changes.map((ch, i) => {
              ch.key.forEach((v, j) => (keyParams[`k${i}_${j}`] = typeof v === 'number' ? BigInt(v) : (v as string)));
              keyParams[`a${i}`] = ch.json;
              return `(${ch.key.map((_, j) => `$k${i}_${j}`).join(', ')}, $a${i})`;
            });
            const cols = table.key.map((_, j) => `c${j}`);
            await exec(
              c,
              `UPDATE ${table.name} SET attributes = v.attrs FROM (VALUES ${tuples.join(', ')}) AS v(${cols.join(', ')}, attrs)
               WHERE ${table.name}.project_id = $project AND ${table.key.map((k, j) => `${table.name}.${k} = v.c${j}`).join(' AND ')}`,
              keyParams,
            );
            changed += changes.length;
          }
          if (found.length < PAGE) break;
          offset += kept;
        }
        return { changed, removed };
      };
      const done = await this.db.read((c) => (table.name === 'logs' ? rewrite(c) : gate.run(() => rewrite(c))));
      counts[table.count] += done.changed;
      counts.attributes += done.removed;
    }
    return counts;
  }
}

/** The WHERE clause of the log rows in scope whose body is content of the classes. */
function bodiesOf(scope: EraseScope): { where: string; p: Params } {
  const p: Params = { project: scope.projectId, bodyclasses: listValue([...scope.classes]) };
  const where = ['l.project_id = $project', 'l.body IS NOT NULL', 'list_contains($bodyclasses, l.body_class)'];
  if (scope.beforeUs !== undefined) {
    where.push('l.ts_us < $before');
    p.before = BigInt(scope.beforeUs);
  }
  if (scope.subject) {
    where.push(LOGS.subject(scope.subject.kind));
    p.subject = scope.subject.id;
  }
  return { where: where.join(' AND '), p };
}

/** The WHERE clause of a table's rows in scope that may hold content of the classes, and its parameters. */
function scopeOf(table: Table, scope: EraseScope): { where: string; p: Params } {
  const needles = CONTENT_KEYS.filter((r) => scope.classes.includes(r.contentClass)).map((r) => r.key);
  const p: Params = { project: scope.projectId };
  const where = [`${table.alias}.project_id = $project`, `(${needles.map((_, i) => `lower(${table.alias}.attributes) LIKE $n${i} ESCAPE '\\'`).join(' OR ')})`];
  needles.forEach((n, i) => (p[`n${i}`] = `%${likeEscape(`"${n}`)}%`));
  if (scope.beforeUs !== undefined) {
    where.push(`${table.alias}.${table.time} < $before`);
    p.before = BigInt(scope.beforeUs);
  }
  if (scope.subject) {
    where.push(table.subject(scope.subject.kind));
    p.subject = scope.subject.id;
  }
  return { where: where.join(' AND '), p };
}

interface Table {
  name: string;
  alias: string;
  from: string;
  key: string[];
  time: string;
  count: 'spans' | 'spanEvents' | 'logs';
  subject(kind: ErasureSubjectKind): string;
}

const ENDUSER = (alias: string) =>
  `(json_extract_string(${alias}.attributes, '$."enduser.id"') = $subject OR json_extract_string(${alias}.attributes, '$."user.id"') = $subject)`;

/** The spans of a subject, for the rows that hang off a span (events) or a trace (logs). */
const SUBJECT_SPANS = (kind: ErasureSubjectKind) =>
  kind === 'session_key' ? 's.session_key = $subject' : kind === 'trace_id' ? 's.trace_id = $subject' : ENDUSER('s');

const LOGS: Table = {
  name: 'logs',
  alias: 'l',
  from: 'logs l',
  key: ['log_id'],
  time: 'ts_us',
  count: 'logs',
  subject: (kind) =>
    kind === 'trace_id'
      ? 'l.trace_id = $subject'
      : kind === 'enduser_id'
        ? ENDUSER('l')
        : `l.trace_id IN (SELECT s.trace_id FROM spans s WHERE s.project_id = l.project_id AND s.session_key = $subject)`,
};

const TABLES: Table[] = [
  {
    name: 'spans',
    alias: 's',
    from: 'spans s',
    key: ['trace_id', 'span_id'],
    time: 'start_us',
    count: 'spans',
    subject: SUBJECT_SPANS,
  },
  {
    name: 'span_events',
    alias: 'e',
    from: 'span_events e',
    key: ['trace_id', 'span_id', 'event_index'],
    time: 'ts_us',
    count: 'spanEvents',
    subject: (kind) =>
      `EXISTS (SELECT 1 FROM spans s WHERE s.project_id = e.project_id AND s.trace_id = e.trace_id AND s.span_id = e.span_id AND ${SUBJECT_SPANS(kind)})`,
  },
  LOGS,
];

/** The attribute JSON without the keys of these classes, or undefined when it has none. */
export function withoutClasses(json: string, classes: ReadonlySet<ContentClass>): { json: string; removed: number } | undefined {
  let attrs: Record<string, unknown>;
  try {
    attrs = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  let removed = 0;
  for (const k of Object.keys(attrs)) {
    const c = contentClassOf(k);
    if (c && classes.has(c)) {
      delete attrs[k];
      removed++;
    }
  }
  return removed ? { json: JSON.stringify(attrs), removed } : undefined;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (m) => `\\${m}`);
