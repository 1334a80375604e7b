import { useEffect, useRef } from 'react';

/**
 * A `<dialog>` opened as a modal when it mounts and closed when it unmounts: put the ref on the element.
 * However it closes (Escape, Cancel, a confirm that finished), focus goes back to what had it before it
 * opened — the button that opened it — when that is still on the page: removing an open dialog leaves focus
 * on the body, and a keyboard user would start again from the top.
 */
export function useModal() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    if (element && !element.open) element.showModal();
    return () => {
      element?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return dialog;
}
