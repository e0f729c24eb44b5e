import { describe, it, expect } from "vitest";
import cardValidator from "card-validator";
import { SandboxCardIssuer } from "../../src/providers/card-issuer.js";

const holder = { firstName: "Ada", lastName: "Lovelace" };

describe("sandbox card issuer", () => {
  it("issues Luhn-valid 16-digit Visa numbers in groups of four", async () => {
    const issuer = new SandboxCardIssuer();
    for (let i = 0; i < 200; i++) {
      const card = await issuer.issueCard(holder);
      expect(card.cardNumber).toMatch(/^4\d{3} \d{4} \d{4} \d{4}$/);
      const check = cardValidator.number(card.cardNumber.replaceAll(" ", ""));
      expect(check.isValid).toBe(true);
      expect(check.card?.type).toBe("visa");
      expect(card.cvv).toMatch(/^\d{3}$/);
    }
  });

  it("sets the expiry three years ahead as MM/YY", async () => {
    const card = await new SandboxCardIssuer(() => new Date("2026-02-15T12:00:00Z")).issueCard(holder);
    expect(card.expiry).toBe("02/29");
    expect(cardValidator.expirationDate(card.expiry).isValid).toBe(true);
  });

  it("gives every card its own number and provider id", async () => {
    const issuer = new SandboxCardIssuer();
    const cards = await Promise.all(Array.from({ length: 50 }, () => issuer.issueCard(holder)));
    expect(new Set(cards.map((c) => c.cardNumber)).size).toBe(50);
    expect(new Set(cards.map((c) => c.providerId)).size).toBe(50);
  });
});
