/**
 * A step's recorded content (prompts, completions, tool arguments and results), read from its span. The
 * trace route applies the project's content policy and the reader's scopes: a key it left out is named in
 * `withheld_attribute_keys`, a value kept as metadata only is a size marker. Both are shown as withheld,
 * never as empty content.
 */
import { api, ok } from '../api/client';
import { useLoad } from '../api/hooks';
import { ErrorNote, Loading, Withheld } from '../ui';
// The service's one table of content keys (a pure module, bundled as it is).
import { contentClassOf } from '../../../server/src/domains/content/content-keys';

const MARKER = /^\[content withheld by policy: (\d+) bytes\]$/;

function pretty(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v, null, 2);
  try {
    return JSON.stringify(JSON.parse(v), null, 2);
  } catch {
    return v;
  }
}

export function StepContent({ project, runId, stepId }: { project: string; runId: string; stepId: string }) {
  const trace = useLoad(async () => ok(await api.GET('/api/v1/traces/{traceId}', { params: { path: { traceId: runId }, query: { project_id: project } } })), [project, runId]);
  if (trace.error) return <ErrorNote error={trace.error} what="The step's span could not be read" />;
  if (!trace.data) return <Loading what="Loading the span" />;
  const span = trace.data.spans.find((s) => s.span_id === stepId);
  if (!span) return <p className="muted">This step's span is not in the trace (it may have been deleted or passed its retention).</p>;
  const shown = Object.entries(span.attributes).filter(([k]) => contentClassOf(k) !== undefined);
  const withheld = span.withheld_attribute_keys ?? [];
  if (!shown.length && !withheld.length) return <p className="muted">This step recorded no content.</p>;
  return (
    <div className="content-list">
      {shown.map(([k, v]) => {
        const marker = typeof v === 'string' ? MARKER.exec(v) : null;
        return (
          <div key={k} className="content-item">
            <h4 className="mono">{k} <span className="muted">({contentClassOf(k)?.replace(/_/g, ' ')})</span></h4>
            {marker ? <Withheld why={`the content policy keeps only its size: ${Number(marker[1]).toLocaleString('en-US')} bytes`} /> : <pre>{pretty(v)}</pre>}
          </div>
        );
      })}
      {withheld.map((k) => (
        <div key={k} className="content-item" data-testid="withheld-content">
          <h4 className="mono">{k}</h4>
          <Withheld why="the content policy or your scopes do not let you read it (reading content needs agents:content:read)" />
        </div>
      ))}
    </div>
  );
}
