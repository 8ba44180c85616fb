/** Reads the text of the QR code in a PNG image (a photographed or exported Tier-A pack). */
import jsQRModule from 'jsqr';
import pngjs from 'pngjs';
import { InputError } from './pins.js';

// jsqr is CommonJS with an `exports.default`: Node's ESM loader hands over module.exports.
const jsQR = jsQRModule.default;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && Buffer.from(bytes.subarray(0, 8)).equals(PNG_SIGNATURE);
}

/** The QR code's text; InputError when the image is no PNG or holds no readable QR code. */
export function readQrPng(bytes: Uint8Array): string {
  let image: { width: number; height: number; data: Buffer };
  try {
    image = pngjs.PNG.sync.read(Buffer.from(bytes));
  } catch (error) {
    throw new InputError('UNREADABLE_IMAGE', `not a readable PNG image: ${(error as Error).message}`);
  }
  const code = jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength), image.width, image.height);
  if (!code) throw new InputError('NO_QR_CODE', 'the image holds no readable QR code');
  return code.data;
}
