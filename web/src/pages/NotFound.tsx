import { useTitle } from '../lib/hooks';

export function NotFound() {
  useTitle('Not found');
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no such page, or you may not see it. <a href="/">Go to the start page</a>.
      </p>
    </section>
  );
}
