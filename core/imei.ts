/** IMEI checks: 15 digits whose last is the Luhn check digit of the first 14. */
export function luhnDigit(first14: string): number {
  let sum = 0;
  for (let i = 0; i < first14.length; i++) {
    let d = first14.charCodeAt(first14.length - 1 - i) - 48;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isValidImei(imei: string): boolean {
  return /^\d{15}$/.test(imei) && luhnDigit(imei.slice(0, 14)) === Number(imei[14]);
}

/** A valid IMEI from a 14-digit body (simulator, tests). */
export function imeiFrom(body14: string): string {
  return body14 + String(luhnDigit(body14));
}

/**
 * A JT/T 808 terminal phone number as we key devices by it: the digits without leading
 * zeros (the header pads it with zeros to 12 or 20 digits). All zeros gives '': no id.
 */
export function normalizeTerminalId(digits: string): string {
  let i = 0;
  while (i < digits.length && digits.charCodeAt(i) === 48) i++;
  return digits.slice(i);
}
