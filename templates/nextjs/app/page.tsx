export default function Home() {
  return (
    <main>
      <h1>wfkit on Next.js</h1>
      <p>
        POST JSON like <code>{'{"text":"hello"}'}</code> to <code>/api/workflow</code> to start a run.
      </p>
    </main>
  );
}
