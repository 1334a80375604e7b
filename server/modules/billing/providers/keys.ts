/**
 * RSA key material as operators paste it: PEM of any kind, or the bare base64 body that Alipay's and
 * WeChat Pay's key tools print (PKCS#8 or PKCS#1 private keys, SPKI public keys, X.509 certificates).
 */
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';

export class KeyFormatError extends Error {
  override name = 'KeyFormatError';
}

function der(text: string): Buffer | null {
  const body = text.replace(/\s+/g, '');
  return /^[A-Za-z0-9+/]+=*$/.test(body) ? Buffer.from(body, 'base64') : null;
}

export function loadPrivateKey(text: string, key: string): KeyObject {
  try {
    if (text.includes('-----BEGIN')) return createPrivateKey(text);
    const bytes = der(text);
    if (bytes) {
      for (const type of ['pkcs8', 'pkcs1'] as const) {
        try {
          return createPrivateKey({ key: bytes, format: 'der', type });
        } catch {
          // try the other encoding
        }
      }
    }
  } catch {
    // reported below
  }
  throw new KeyFormatError(`${key} is not a readable private key (PEM, or base64 PKCS#8 / PKCS#1)`);
}

export function loadPublicKey(text: string, key: string): KeyObject {
  try {
    if (text.includes('-----BEGIN CERTIFICATE')) return new X509Certificate(text).publicKey;
    if (text.includes('-----BEGIN')) return createPublicKey(text);
    const bytes = der(text);
    if (bytes) return createPublicKey({ key: bytes, format: 'der', type: 'spki' });
  } catch {
    // reported below
  }
  throw new KeyFormatError(`${key} is not a readable public key (PEM, or base64 SPKI)`);
}

/** A platform certificate and the serial number WeChat Pay names it by (`Wechatpay-Serial`, upper-case hex). */
export function loadCertificate(text: string, key: string): { serial: string; publicKey: KeyObject; validTo: Date } {
  try {
    const cert = new X509Certificate(text);
    return { serial: cert.serialNumber.toUpperCase(), publicKey: cert.publicKey, validTo: new Date(cert.validTo) };
  } catch {
    throw new KeyFormatError(`${key} is not a readable X.509 certificate (PEM)`);
  }
}
