/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { StoreInfo } from '../../../api/store-info.js';
import { describeStoreInfo } from '../../../view/store-size.js';
import type { Api } from '../api.js';

/** How often the footer reads the store's size again: it changes slowly, and each read costs a query. */
const REFRESH_MS = 30_000;

/** The footer: the database's size and how long finished runs are kept (`GET /v1/store`); nothing until it answers. */
export function StoreFooter(props: { api: Api }): JSX.Element | null {
  const [info, setInfo] = useState<StoreInfo | null>(null);
  useEffect(() => {
    let stopped = false;
    const read = (): void => {
      props.api.storeInfo().then(
        (next) => !stopped && setInfo(next),
        () => {}, // the page says "reconnecting" already when the runner is away
      );
    };
    read();
    const timer = setInterval(read, REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [props.api]);
  if (info === null) return null;
  return (
    <footer
      class="footer muted"
      data-testid="store-footer"
      title="GET /v1/store: the runner's database on disk, and its retention (--retention)"
    >
      {describeStoreInfo(info)}
    </footer>
  );
}
