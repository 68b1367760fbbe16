/** Log in: POST /v1/sessions with email and password; the cookie is set by the server, the CSRF token kept in memory. */
import { post, type Session } from '../api';
import { navigate, type Mount } from '../router';
import { setSession } from '../session';
import { errorBox, html, render } from '../ui';

export const mount: Mount = (el, _params, query) => {
  let error: unknown = null;
  let busy = false;
  const next = query.get('next');
  const target = next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/fleet';

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const data = new FormData(form);
    busy = true;
    error = null;
    draw();
    try {
      const session = await post<Session>('/v1/sessions', { email: String(data.get('email')), password: String(data.get('password')) });
      setSession(session);
      navigate(target, true);
    } catch (err) {
      error = err;
      busy = false;
      draw();
      form.querySelector<HTMLInputElement>('#password')?.select();
    }
  };

  const draw = () =>
    render(
      html`
        <section class="login card">
          <h1>Fleet panel</h1>
          <p>Log in with your panel account.</p>
          <form @submit=${submit} novalidate>
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" required autofocus />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
            ${errorBox(error)}
            <button type="submit" class="primary" ?disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button>
          </form>
        </section>
      `,
      el,
    );
  draw();
  el.querySelector<HTMLInputElement>('#email')?.focus();
};
