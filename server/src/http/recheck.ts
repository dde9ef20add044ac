/**
 * The re-check hook for long-running work (spec 1, Authentication rules 7-8): a stream or download
 * admitted with a credential calls `recheck` while it runs. The credential's secret goes through the
 * same resolution as a new request, so revocation, expiry, scope narrowing and role changes apply as
 * they do to the next request. A stream ends with a final `unauthorized` event when the credential no
 * longer authenticates, a final `forbidden` when a scope it was admitted with is gone, and without the
 * final marker on `expired` (routine session expiry or rotation: the dashboard renews and resumes).
 */
import type { AgentConnectionService } from '../domains/agent-connections/service.js';
import type { ApiKeyService } from '../domains/api-keys/service.js';
import type { MemberService } from '../domains/people/members-service.js';
import type { SessionService } from '../domains/sessions/service.js';
import { tokenHash } from '../lib/tokens.js';
import type { Clock } from '../lib/clock.js';
import type { ControlStore } from '../storage/control/stores.js';
import type { Principal } from './principal.js';

export type RecheckVerdict = 'ok' | 'unauthorized' | 'forbidden' | 'expired';

/** At most this long passes between two checks of a running stream (the spec allows 30 seconds). */
export const RECHECK_INTERVAL_MS = 10_000;

export class CredentialRechecker {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly sessions: SessionService,
    private readonly members: MemberService,
    private readonly control: ControlStore,
    private readonly clock: Clock,
    /** Resolves OAuth access tokens of agents; without it an OAuth-admitted stream ends as unauthorized. */
    private readonly agentConnections?: AgentConnectionService,
  ) {}

  /** `admitted` are the scopes the work was admitted with; losing one of them is `forbidden`. */
  async recheck(admittedAs: Principal, secret: string, admitted: readonly string[]): Promise<RecheckVerdict> {
    const fresh =
      admittedAs.kind === 'api_key'
        ? await this.apiKeys.authenticate(secret)
        : admittedAs.kind === 'session'
          ? await this.sessions.authenticate(secret)
          : admittedAs.kind === 'oauth' && this.agentConnections
            ? await this.agentConnections.authenticate(secret)
            : undefined;
    if (!fresh) {
      if (admittedAs.kind === 'session') return this.whySessionEnded(secret);
      // A short-lived access token that merely expired under a live approval: the agent refreshes and resumes.
      if (admittedAs.kind === 'oauth' && this.agentConnections && admittedAs.connectionId)
        return (await this.agentConnections.connectionStillActive(admittedAs.orgId, admittedAs.connectionId)) ? 'expired' : 'unauthorized';
      return 'unauthorized';
    }
    if (fresh.orgId !== admittedAs.orgId || fresh.userId !== admittedAs.userId) return 'unauthorized';
    return admitted.every((s) => fresh.scopes.has(s)) ? 'ok' : 'forbidden';
  }

  /** A session credential stopped resolving: routine expiry or rotation of a live sign-in, or an end. */
  private async whySessionEnded(secret: string): Promise<RecheckVerdict> {
    const found = await this.control.sessions.findCredential(tokenHash(secret));
    if (!found || found.signIn.revokedAt !== null || found.credential.status === 'revoked') return 'unauthorized';
    if (!(await this.members.roleOf(this.control, found.signIn.orgId, found.signIn.userId))) return 'unauthorized';
    const expired = Date.parse(found.credential.expiresAt) <= this.clock.now().getTime();
    return expired || found.credential.status === 'rotated' ? 'expired' : 'unauthorized';
  }
}

/** A running re-check: call it to stop; `recheckNow` checks at once (a change of the credential was heard). */
export interface CredentialWatch {
  (): void;
  recheckNow(): void;
}

/**
 * Re-checks every `intervalMs`, and at once on `recheckNow()`, until the verdict is not `ok` (then calls
 * `onEnd` once) or until the returned function is called. A failed check (store unreachable) is retried at
 * the next tick. A `recheckNow` during a check runs one more check after it, so a change committed while a
 * check was reading is never missed.
 */
export function watchCredential(
  rechecker: CredentialRechecker,
  admittedAs: Principal,
  secret: string,
  admitted: readonly string[],
  onEnd: (verdict: Exclude<RecheckVerdict, 'ok'>) => void,
  intervalMs = RECHECK_INTERVAL_MS,
): CredentialWatch {
  let stopped = false;
  let busy = false;
  let again = false;
  const check = async (heard: boolean) => {
    if (stopped) return;
    if (busy) {
      // A tick during a check is skipped; a heard change is checked once more after it.
      again ||= heard;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const verdict = await rechecker.recheck(admittedAs, secret, admitted);
        if (verdict !== 'ok' && !stopped) {
          stopped = true;
          clearInterval(timer);
          onEnd(verdict);
        }
      } while (again && !stopped);
    } catch {
      /* transient: checked again at the next tick */
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(false), intervalMs);
  timer.unref?.();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return Object.assign(stop, { recheckNow: () => void check(true) });
}
