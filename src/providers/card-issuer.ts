import { randomBytes, randomInt } from "node:crypto";

export type IssuedCard = {
  providerId: string;
  /** "4xxx xxxx xxxx xxxx" */
  cardNumber: string;
  /** 3 digits */
  cvv: string;
  /** MM/YY */
  expiry: string;
};

export type CardHolder = { firstName: string; lastName: string };

export interface CardIssuer {
  issueCard(holder: CardHolder): Promise<IssuedCard>;
}

const SANDBOX_BIN = "423156";
const VALIDITY_YEARS = 3;

const randomDigits = (count: number) => Array.from({ length: count }, () => randomInt(10)).join("");

/** The digit that makes `payload` + digit pass the Luhn check. */
function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export class SandboxCardIssuer implements CardIssuer {
  constructor(private readonly now: () => Date = () => new Date()) {}

  // The sandbox network embosses nothing, so the holder's name is not needed.
  async issueCard(_holder: CardHolder): Promise<IssuedCard> {
    const payload = SANDBOX_BIN + randomDigits(15 - SANDBOX_BIN.length);
    const digits = payload + luhnCheckDigit(payload);
    const now = this.now();
    const month = String(now.getUTCMonth() + 1).padStart(2, "0");
    const year = String((now.getUTCFullYear() + VALIDITY_YEARS) % 100).padStart(2, "0");
    return {
      providerId: `crd_${randomBytes(12).toString("hex")}`,
      cardNumber: digits.match(/\d{4}/g)!.join(" "),
      cvv: randomDigits(3),
      expiry: `${month}/${year}`,
    };
  }
}
