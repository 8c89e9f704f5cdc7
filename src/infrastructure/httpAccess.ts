import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Who may reach the HTTP servers yiem starts (the chat endpoint, the console, the codec server):
 * loopback without a token, any other address only with one. One home, so that every server compares
 * tokens the same timing-safe way and reads loopback the same.
 */

/** Whether `host` only listens on (or names) this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || bare === '::ffff:127.0.0.1'
  );
}

/** The host name of a `Host` header, without its port. */
export function hostName(header: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(header);
  if (bracketed) return bracketed[1] as string;
  return header.replace(/:\d+$/, '');
}

/**
 * Throws unless `host` is loopback or a token is given: a server other machines can reach must ask
 * for one. `what` names the server in the message.
 */
export function requireTokenOffLoopback(what: string, host: string, token: string | undefined): void {
  if (token !== undefined && token.length === 0) throw new Error(`The ${what} token is empty`);
  if (isLoopbackHost(host) || token) return;
  throw new Error(
    `The ${what} would listen on ${host}, which other machines can reach: give it a token (every request then needs \`Authorization: Bearer <token>\`), or listen on 127.0.0.1`,
  );
}

/**
 * Whether a request without a token may be answered: it names a loopback host in `Host`, so that a
 * web page whose name points at 127.0.0.1 (DNS rebinding) cannot reach a loopback server.
 */
export function namesLoopbackHost(hostHeader: string | undefined): boolean {
  return isLoopbackHost(hostName(hostHeader ?? ''));
}

/** Compares given tokens with one expected token in constant time, whatever their lengths. */
export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string) {
    if (token.length === 0) throw new Error('The token is empty');
    this.#digest = digest(token);
  }

  /** Whether `given` is the token. */
  matches(given: string | undefined): boolean {
    // Digests have equal lengths, so the comparison takes as long whatever was sent.
    return given !== undefined && timingSafeEqual(digest(given), this.#digest);
  }

  /** Whether an `Authorization` header carries `Bearer <token>`. */
  matchesBearer(header: string | undefined): boolean {
    return this.matches(bearerToken(header));
  }
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
