/**
 * Log bodies that are recorded content (docs/content-policy.md "Log bodies"): which records carry one,
 * and what the project's `store` cell lets be written of it. The event names are in the one table
 * (domains/content/content-keys.ts).
 */
import { bodyClassOfEvent, type ContentClass } from '../../domains/content/content-keys.js';
import { metadataMarker, type ContentAccess } from '../../domains/content-policy/access.js';
import type { KeyValue } from './decode.js';
import type { LogRecordMessage } from './signal-decode.js';

/** The attribute instrumentations used for the event name before LogRecord had a field for it. */
const EVENT_NAME_ATTRIBUTE = 'event.name';

/** The `event.name` attribute's string value (the last one when repeated, as attribute maps keep), or undefined. */
function eventNameAttribute(kvs: readonly KeyValue[] | null | undefined): string | undefined {
  if (!kvs) return undefined;
  let name: string | undefined;
  for (const kv of kvs) if (kv.key === EVENT_NAME_ATTRIBUTE) name = kv.value?.stringValue ?? undefined;
  return name;
}

/**
 * The content class of the record's body: by its `event_name`, else by its `event.name` attribute; a
 * record naming a content event in either is content (the field wins when both name one).
 */
export function bodyClassOf(rec: LogRecordMessage): ContentClass | undefined {
  return bodyClassOfEvent(rec.eventName) ?? bodyClassOfEvent(eventNameAttribute(rec.attributes));
}

/**
 * What is written of a content body of class `cls`: `allow` the body, `allow_metadata` the size marker
 * attributes get, `deny` nothing (null: the record has no body, never an empty text standing for it).
 * Without `store` (conversion tests) the body as sent.
 */
export function storedBody(body: string | null, cls: ContentClass, store: ContentAccess | undefined): string | null {
  if (body === null || store === undefined) return body;
  const d = store.of(cls);
  if (d === 'allow') return body;
  store.refused(cls, d);
  return d === 'allow_metadata' ? metadataMarker(body) : null;
}
