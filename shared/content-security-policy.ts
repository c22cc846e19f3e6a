// The page's Content-Security-Policy, one text for both hosts: the Electron host (app://softphone,
// electron/desktop/security-policy.ts and app-protocol.ts) and the browser host
// (electron/browser/browser-host.ts) send it as a header. renderer/index.html's meta tag is a static
// file and says it again, word for word; test/unit/browser/content-security-policy.test.ts and
// test/unit/desktop/security-checklist.test.ts hold the two together.

/**
 * The page's own policy, as its meta tag has it: everything comes from the page's own origin and
 * nothing else is allowed. No 'unsafe-inline' for scripts or styles: Vite puts the CSS in a file and
 * injects no inline script, and React's `style={…}` props are set through the CSSOM, which the CSP
 * does not govern. connect-src 'self' is for the page's own files (the hold music, a Vite `?url`
 * asset it fetches) and, in the browser host, its WebSocket to /api: CSP Level 3 matches ws: on the
 * page's own host and port with 'self' (Chromium 71+, Firefox, Safari 16+; test/e2e/csp.test.ts
 * checks it in Chromium), so the policy names no port and stays one static text. WebRTC media and
 * `srcObject` streams are not governed by the CSP. img-src keeps data: for the `data:,` icon that
 * spares a request for /favicon.ico. media-src allows blob: for "Play voicemail": the window gets
 * the file's bytes from the main process (getVoicemail) and plays them from an object URL of its
 * own making; a blob: URL is bound to the page's origin, so it opens nothing beyond it.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The response header: the page's policy plus frame-ancestors, which only a header can carry
 * (Chromium ignores it in a meta tag, with a console error).
 */
export const CONTENT_SECURITY_POLICY = `${PAGE_CONTENT_SECURITY_POLICY}; frame-ancestors 'none'`;
