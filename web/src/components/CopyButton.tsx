import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard and says so (polite live region). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
    } catch {
      setSaid('Copying was not allowed; select the text and copy it.');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="btn" onClick={copy}>
        {label}
      </button>
      <span role="status" class="hint">
        {said}
      </span>
    </span>
  );
}
