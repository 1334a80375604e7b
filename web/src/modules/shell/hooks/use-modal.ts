import { useEffect, useRef } from 'react';

/** A `<dialog>` opened as a modal when it mounts and closed when it unmounts: put the ref on the element. */
export function useModal() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);
  return dialog;
}
