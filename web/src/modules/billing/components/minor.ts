/** Integer minor units of a currency (6500 CNY = 65.00, 500 JPY = 500) as an exact decimal string for `format.money`. */
export function minorAmount(minor: number, currency: string): string {
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code: two digits, as most currencies have.
  }
  const sign = minor < 0 ? '-' : '';
  const magnitude = String(Math.abs(minor));
  if (digits === 0) return `${sign}${magnitude}`;
  const padded = magnitude.padStart(digits + 1, '0');
  return `${sign}${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}
