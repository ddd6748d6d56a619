/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { RunSearch } from '../router.js';

/** The form's fields as typed (times as `datetime-local` text, in the browser's time zone). */
interface Draft {
  idPrefix: string;
  urlPrefix: string;
  failedStep: string;
  from: string;
  to: string;
}

/** Epoch ms as a `datetime-local` value (local time, to the minute). */
function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return '';
  const date = new Date(ms);
  return new Date(ms - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A `datetime-local` value (read as local time) as epoch ms; undefined when empty or unreadable. */
function fromLocalInput(text: string): number | undefined {
  if (text === '') return undefined;
  const at = new Date(text).getTime();
  return Number.isNaN(at) ? undefined : at;
}

function draftOf(search: RunSearch): Draft {
  return {
    idPrefix: search.idPrefix ?? '',
    // An exact URL from a copied address shows as a prefix: a URL is a prefix of itself.
    urlPrefix: search.urlPrefix ?? search.url ?? '',
    failedStep: search.failedStep ?? '',
    from: toLocalInput(search.createdAfter),
    to: toLocalInput(search.createdBefore),
  };
}

function searchOf(draft: Draft, current: RunSearch): RunSearch {
  const search: RunSearch = {};
  const text = (value: string): string | undefined => (value.trim() === '' ? undefined : value.trim());
  const idPrefix = text(draft.idPrefix);
  if (idPrefix) search.idPrefix = idPrefix;
  const urlPrefix = text(draft.urlPrefix);
  if (urlPrefix) {
    if (current.url !== undefined && urlPrefix === current.url) search.url = urlPrefix;
    else search.urlPrefix = urlPrefix;
  }
  const failedStep = text(draft.failedStep);
  if (failedStep) search.failedStep = failedStep;
  const from = fromLocalInput(draft.from);
  if (from !== undefined) search.createdAfter = from;
  const to = fromLocalInput(draft.to);
  if (to !== undefined) search.createdBefore = to;
  return search;
}

/**
 * The runs page's search: id prefix, workflow URL prefix, failed step, a creation time range. The
 * runner filters (on its indexes), so the list and its "Older runs" pages are the search's; the
 * search lives in the address, so it can be copied and goes back and forward.
 */
export function RunSearchBar(props: { search: RunSearch; onSearch: (search: RunSearch) => void }): JSX.Element {
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.search));
  // Back/forward or a chip changes the search from outside: the fields follow.
  useEffect(() => setDraft(draftOf(props.search)), [JSON.stringify(props.search)]);
  const field = (key: keyof Draft) => ({
    value: draft[key],
    onInput: (event: Event) => setDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value }),
  });
  const active = Object.keys(props.search).length > 0;
  const submit = (event: Event): void => {
    event.preventDefault();
    props.onSearch(searchOf(draft, props.search));
  };
  return (
    <form class="panel run-search" role="search" aria-label="Search runs" data-testid="run-search" onSubmit={submit}>
      <label>
        <span>Run id</span>
        <input
          name="idPrefix"
          class="mono"
          placeholder="wfr_01J…"
          autocomplete="off"
          spellcheck={false}
          {...field('idPrefix')}
        />
      </label>
      <label class="wide">
        <span>Workflow URL starts with</span>
        <input
          name="urlPrefix"
          placeholder="https://app.example/api/"
          autocomplete="off"
          spellcheck={false}
          {...field('urlPrefix')}
        />
      </label>
      <label>
        <span>Failed step</span>
        <input name="failedStep" placeholder="charge" autocomplete="off" spellcheck={false} {...field('failedStep')} />
      </label>
      <label>
        <span>Created from</span>
        <input name="createdAfter" type="datetime-local" {...field('from')} />
      </label>
      <label>
        <span>to</span>
        <input name="createdBefore" type="datetime-local" {...field('to')} />
      </label>
      <div class="run-search-buttons">
        <button type="submit" class="button primary">
          Search
        </button>
        {active ? (
          <button type="button" class="button subtle" onClick={() => props.onSearch({})}>
            Clear
          </button>
        ) : null}
      </div>
    </form>
  );
}
