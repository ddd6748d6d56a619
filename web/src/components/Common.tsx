/** @jsxImportSource preact */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { headerEntries } from '../format.js';
import { navigate } from '../router.js';
import type { Run } from '../../../api/dto.js';
import { protocolLabel } from '../../../view/protocol.js';

/** An internal link that navigates without a reload (a modified click still opens a new tab). */
export function Link(props: {
  href: string;
  class?: string;
  children: ComponentChildren;
  label?: string;
  current?: boolean;
  testId?: string;
}): JSX.Element {
  const onClick = (event: MouseEvent): void => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a
      href={props.href}
      class={props.class}
      onClick={onClick}
      aria-label={props.label}
      aria-current={props.current ? 'page' : undefined}
      data-testid={props.testId}
    >
      {props.children}
    </a>
  );
}

/** A run or step status as a coloured label; the text is the status itself. */
export function StatusBadge(props: { status: string; testId?: string }): JSX.Element {
  return (
    <span class={`badge status-${props.status}`} data-testid={props.testId}>
      {props.status}
    </span>
  );
}

/** The protocol that started a run, when it is not wfkit's own (view/protocol.ts). */
export function ProtocolBadge(props: { run: Pick<Run, 'protocol'> }): JSX.Element | null {
  const label = protocolLabel(props.run);
  if (label === null) return null;
  return (
    <span
      class="badge protocol"
      data-testid="protocol-badge"
      title="Started by an @upstash/workflow app through the runner's QStash API"
    >
      {label}
    </span>
  );
}

/** A step's kind: run, sleep, wait or call. */
export function KindBadge(props: { kind: string }): JSX.Element {
  return <span class={`kind kind-${props.kind}`}>{props.kind}</span>;
}

async function copyText(text: string): Promise<boolean> {
  // The Clipboard API needs a secure context (https, or loopback); a runner reached over plain
  // http on another address falls back to the old selection copy.
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {}
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'copy-buffer';
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {}
  area.remove();
  return ok;
}

/** Copies `text`; says so for a moment. */
export function CopyButton(props: { text: string; label: string }): JSX.Element {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const onClick = async (): Promise<void> => {
    setState((await copyText(props.text)) ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 1500);
  };
  return (
    <button type="button" class={`copy copy-${state}`} onClick={onClick} aria-label={props.label} title={props.label}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}

/** A body or value shown as data: text in a <pre>, never parsed as markup, with a copy button. */
export function Body(props: { text: string; label: string; empty?: string; testId?: string }): JSX.Element {
  if (props.text === '') return <p class="muted">{props.empty ?? '(empty)'}</p>;
  return (
    <div class="body">
      <div class="body-tools">
        <CopyButton text={props.text} label={`Copy ${props.label}`} />
      </div>
      <pre data-testid={props.testId}>{props.text}</pre>
    </div>
  );
}

/** Headers as a two-column table, sorted by name. */
export function HeadersTable(props: {
  headers: Record<string, string> | null | undefined;
  testId?: string;
}): JSX.Element {
  const entries = headerEntries(props.headers);
  if (entries.length === 0) return <p class="muted">(no headers)</p>;
  return (
    <table class="headers" data-testid={props.testId}>
      <tbody>
        {entries.map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A titled block of a panel. */
export function Section(props: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
  testId?: string;
}): JSX.Element {
  return (
    <section class="section" data-testid={props.testId}>
      <header class="section-head">
        <h3>{props.title}</h3>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** Label/value pairs. */
export function Facts(props: { items: [string, ComponentChildren][] }): JSX.Element {
  return (
    <dl class="facts">
      {props.items.map(([label, value]) => (
        <div class="fact" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A serialized error: name and message, the stack folded away. */
export function ErrorBlock(props: {
  error: { name: string; message: string; stack?: string; code?: string };
}): JSX.Element {
  const { error } = props;
  return (
    <div class="error-block" role="alert" data-testid="error">
      <p class="error-message">
        <strong>{error.name}</strong>
        {error.code ? <span class="muted"> [{error.code}]</span> : null}: {error.message}
      </p>
      {error.stack ? (
        <details>
          <summary>Stack</summary>
          <pre>{error.stack}</pre>
        </details>
      ) : null}
    </div>
  );
}

/** The current time, refreshed every `ms`: for "3 s ago" and running durations. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
