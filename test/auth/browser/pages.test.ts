import { createHash } from 'node:crypto';
import { errorPage, loginPage, pageSecurityPolicy } from '../../../src/auth/browser/pages.js';

const view = { clientName: 'console', request: 'req"<>', csrf: 'c&sr', providers: [] };

describe('pages', () => {
  test('when the policy is built, then it allows nothing but the page’s own stylesheet, by its hash', () => {
    const html = loginPage(view);
    const style = /<style>([\s\S]*)<\/style>/.exec(html)![1]!;
    const policy = pageSecurityPolicy(['https://console.example.com']);
    expect(policy).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(policy).toMatch(/^default-src 'none'; /);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("form-action 'self' https://console.example.com");
    expect(policy).not.toMatch(/unsafe|script-src|\*/);
  });

  test('when a page is rendered, then it holds no script, no external resource and no inline style attribute', () => {
    for (const html of [
      loginPage({ ...view, providers: [{ label: 'Keycloak', href: '/oauth/login/keycloak?request=r' }] }),
      errorPage({ title: 't', detail: 'd' }),
    ]) {
      expect(html).not.toMatch(/<script|javascript:|\son[a-z]+=|style="|<link|@import|url\(/i);
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  test('when values hold markup, then every one is escaped', () => {
    const html = loginPage({
      clientName: '<img src=x onerror=alert(1)>',
      request: '"><script>',
      csrf: "'",
      username: '</form><b>',
      error: { title: '<i>t</i>' },
      providers: [{ label: '<u>idp</u>', href: '/x?a=1&b="2"' }],
    });
    expect(html).not.toMatch(/<img src=x|<script>|<\/form><b>|<i>t<\/i>|<u>idp/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;"');
    expect(html).toContain('href="/x?a=1&amp;b=&quot;2&quot;"');
  });

  test('when the login page shows an error, then the fields point at it and the password field takes the focus', () => {
    const html = loginPage({ ...view, username: 'alice', error: { title: 'Wrong user name or password.' } });
    expect(html).toContain('role="alert" id="login-error"');
    expect(html).toMatch(/id="username"[^>]*aria-invalid="true" aria-describedby="login-error"/);
    expect(html).toMatch(/id="password"[^>]*autofocus/);
    expect(html).toMatch(/id="username"[^>]*autocomplete="username"/);
    expect(html).toMatch(/id="password"[^>]*autocomplete="current-password"/);
    expect(html).toContain('<label for="username">');
    expect(html).toContain('<label for="password">');
  });
});
