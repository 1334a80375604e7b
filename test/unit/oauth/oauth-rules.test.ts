/**
 * The pure rules of svc's OAuth for MCP clients: PKCE S256 (RFC 7636 Appendix B's example), which redirect
 * URIs a client may register, and how a request's redirect URI is matched to them (exact, except a loopback
 * port, RFC 8252 §7.3).
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../server/errors/app-error.ts';
import { checkRedirectUri, matchRedirectUri } from '../../../server/modules/oauth/oauth-client.ts';
import { isCodeChallenge, isCodeVerifier, verifiesS256 } from '../../../server/modules/oauth/pkce.ts';

describe('PKCE S256', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('verifies RFC 7636 Appendix B, and nothing else', () => {
    expect(isCodeVerifier(verifier)).toBe(true);
    expect(isCodeChallenge(challenge)).toBe(true);
    expect(verifiesS256(verifier, challenge)).toBe(true);
    expect(verifiesS256(`${verifier.slice(0, -1)}A`, challenge)).toBe(false);
    expect(verifiesS256(verifier, challenge.slice(0, -1))).toBe(false);
  });

  it('takes verifiers of 43 to 128 unreserved characters only', () => {
    expect(isCodeVerifier('a'.repeat(42))).toBe(false);
    expect(isCodeVerifier('a'.repeat(129))).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(42)}=`)).toBe(false);
    expect(isCodeVerifier(42)).toBe(false);
  });
});

describe('redirect URIs', () => {
  it.each(['https://app.example.com/cb', 'http://127.0.0.1:8080/callback', 'http://127.0.0.2/cb', 'http://localhost/callback', 'http://[::1]:9000/cb', 'cursor://anysphere.cursor-mcp/oauth/callback'])(
    'accepts %s',
    (uri) => expect(checkRedirectUri(uri)).toBe(uri),
  );

  it.each([
    'http://example.com/cb',
    'http://127.0.0.1.example.com/cb',
    'http://localhost.evil.example/cb',
    'javascript:alert(1)',
    'data:text/html,x',
    'file:///etc/passwd',
    'https://app.example.com/cb#x',
    'https://u:p@app.example.com/cb',
    'relative/cb',
    'https://app.example.com/\u0000',
  ])('refuses %s with invalid_redirect_uri', (uri) => {
    expect(() => checkRedirectUri(uri)).toThrow(AppError);
    try {
      checkRedirectUri(uri);
    } catch (error) {
      expect((error as AppError).code).toBe('invalid_redirect_uri');
    }
  });

  it('matches exactly, or a loopback URI on another port; a single registered URI stands in for a missing one', () => {
    const registered = ['http://127.0.0.1:33418/callback', 'https://app.example.com/cb'];
    expect(matchRedirectUri(registered, 'https://app.example.com/cb')).toBe('https://app.example.com/cb');
    expect(matchRedirectUri(registered, 'http://127.0.0.1:50000/callback')).toBe('http://127.0.0.1:50000/callback');
    expect(matchRedirectUri(registered, 'http://127.0.0.1:50000/other')).toBeNull();
    expect(matchRedirectUri(registered, 'http://localhost:33418/callback')).toBeNull();
    expect(matchRedirectUri(registered, 'https://app.example.com:8443/cb')).toBeNull();
    expect(matchRedirectUri(registered, undefined)).toBeNull();
    expect(matchRedirectUri(['https://app.example.com/cb'], undefined)).toBe('https://app.example.com/cb');
  });
});
