/**
 * A QR code drawn as SVG (one path, crisp at any size and when printed) from the `qrcode` library's module
 * matrix — for WeChat Pay Native's `code_url`, which the payer scans with WeChat.
 */
import { create } from 'qrcode';
import { useMemo } from 'react';

/** Quiet zone around the code, in modules (the standard asks for 4). */
const margin = 4;

export function QrCode({ value, label, size = 232 }: { value: string; label: string; size?: number }) {
  const { path, extent } = useMemo(() => {
    const { modules } = create(value, { errorCorrectionLevel: 'M' });
    let d = '';
    for (let row = 0; row < modules.size; row += 1) {
      for (let col = 0; col < modules.size; col += 1) {
        if (modules.data[row * modules.size + col]) d += `M${col + margin} ${row + margin}h1v1h-1z`;
      }
    }
    return { path: d, extent: modules.size + 2 * margin };
  }, [value]);
  return (
    <svg className="qr-code" role="img" aria-label={label} width={size} height={size} viewBox={`0 0 ${extent} ${extent}`} shapeRendering="crispEdges" data-value={value}>
      <rect width={extent} height={extent} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
