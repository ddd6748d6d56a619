/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ClientError } from '../../../api/errors.js';
import type { Api } from '../api.js';

/**
 * Asked for when the runner is bound to a non-loopback address: the token (`WF_TOKEN`), tried
 * against the runner before it is kept for this tab.
 */
export function Login(props: { api: Api; note: string | null; onToken: (token: string) => void }): JSX.Element {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(props.note);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const token = value.trim();
    if (token === '') return setError('Enter the token.');
    setBusy(true);
    setError(null);
    try {
      await props.api.check(token);
      props.onToken(token);
    } catch (failure) {
      setError(
        failure instanceof ClientError && failure.status === 401
          ? 'The runner refused this token.'
          : failure instanceof ClientError
            ? failure.runnerMessage
            : (failure as Error).message,
      );
      setBusy(false);
    }
  };

  return (
    <form class="panel login" onSubmit={submit} data-testid="login">
      <h2>Sign in to this runner</h2>
      <p class="muted">
        This runner listens on a non-loopback address, so its runs are shown only with its token (<code>WF_TOKEN</code>
        ). The token is kept in this tab only.
      </p>
      <label for="token">Token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="off"
        spellcheck={false}
        value={value}
        onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        disabled={busy}
      />
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" class="button primary" disabled={busy}>
        {busy ? 'Checking…' : 'Sign in'}
      </button>
    </form>
  );
}
