import { describe, expect, it } from "vitest";
import { maskedPixKey, parsePixKey, parseTaxId } from "../../src/providers/brazil.js";

/**
 * The Receita Federal's check digits, written out from the published rule (independent of the
 * library): mod 11 of the weighted sum, 0 when the remainder is below 2, else 11 − remainder.
 * Characters count as their ASCII code − 48 (so digits are themselves, A = 17), as the 2026
 * alphanumeric CNPJ rule says.
 */
function modElevenDigit(text: string, weights: number[]): number {
  const sum = [...text].reduce((total, char, i) => total + (char.charCodeAt(0) - 48) * weights[i], 0);
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}
const cpfDigits = (base9: string) => {
  const first = modElevenDigit(base9, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${first}${modElevenDigit(base9 + first, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2])}`;
};
const cnpjDigits = (base12: string) => {
  const first = modElevenDigit(base12, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${first}${modElevenDigit(base12 + first, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])}`;
};

describe("CPF and CNPJ check digits (the library against the published rule)", () => {
  it("agrees with hand-computed numbers", () => {
    // CPF 529.982.247-25: 5·10+2·9+9·8+9·7+8·6+2·5+2·4+4·3+7·2 = 295, 295 mod 11 = 9 → 2;
    // then ·11…2 with the 2: 347, 347 mod 11 = 6 → 5.
    expect(cpfDigits("529982247")).toBe("25");
    expect(parseTaxId("52998224725")).toBe("52998224725");
    expect(parseTaxId("529.982.247-25")).toBe("52998224725");
    // CNPJ 11.222.333/0001-81: ·5,4,3,2,9,8,7,6,5,4,3,2 = 102, mod 11 = 3 → 8; with the 8: 120, mod 11 = 10 → 1.
    expect(cnpjDigits("112223330001")).toBe("81");
    expect(parseTaxId("11.222.333/0001-81")).toBe("11222333000181");
    // The Receita's alphanumeric example 12.ABC.345/01DE-35: A=17, B=18, C=19, D=20, E=21 → 459 mod 11 = 8 → 3; 424 mod 11 = 6 → 5.
    expect(cnpjDigits("12ABC34501DE")).toBe("35");
    expect(parseTaxId("12.ABC.345/01DE-35")).toBe("12ABC34501DE35");
  });

  it.each(["52998224724", "52998224715", "11222333000182", "11222333000171", "12ABC34501DE36", "11111111111", "00000000000000", "1234567890", "529982247250", "abc"])(
    "refuses %s as a taxId",
    (taxId) => expect(() => parseTaxId(taxId)).toThrow(/taxId must be a CPF \(11 digits\) or a CNPJ \(14 characters\) with valid check digits/),
  );

  it("agrees with the rule on 2,000 generated CPFs and CNPJs, right and wrong", () => {
    for (let i = 1; i <= 1000; i++) {
      const base9 = String(i * 104_729).padStart(9, "0").slice(-9);
      if (/^(\d)\1{8}$/.test(base9)) continue;
      const cpf = base9 + cpfDigits(base9);
      expect(parseTaxId(cpf)).toBe(cpf);
      expect(() => parseTaxId(base9 + String((Number(cpf.slice(-2)) + 1) % 100).padStart(2, "0"))).toThrow();
      const base12 = String(i * 7_919_011).padStart(8, "0").slice(-8) + "0001";
      const cnpj = base12 + cnpjDigits(base12);
      expect(parseTaxId(cnpj)).toBe(cnpj);
      expect(() => parseTaxId(base12 + String((Number(cnpj.slice(-2)) + 1) % 100).padStart(2, "0"))).toThrow();
    }
  });
});

describe("Pix keys", () => {
  it.each([
    ["CPF", "52998224725", "52998224725"],
    ["CPF", "529.982.247-25", "52998224725"],
    ["CNPJ", "11222333000181", "11222333000181"],
    ["CNPJ", "12.ABC.345/01DE-35", "12ABC34501DE35"],
    ["EMAIL", "Ada@Example.com", "ada@example.com"],
    ["PHONE", "+5511987654321", "+5511987654321"],
    ["EVP", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000"],
  ] as const)("accepts a %s key %s", (keyType, key, stored) => {
    expect(parsePixKey({ keyType, key })).toEqual({ keyType, key: stored });
  });

  it.each([
    ["CPF", "52998224724"],
    ["CPF", "11111111111"],
    ["CPF", "+5511987654321"],
    ["CNPJ", "11222333000182"],
    ["CNPJ", "52998224725"],
    ["EMAIL", "not-an-email"],
    ["EMAIL", `${"a".repeat(70)}@example.com`],
    ["PHONE", "11987654321"],
    ["PHONE", "(11) 98765-4321"],
    ["PHONE", "+551133334444"],
    ["PHONE", "+14155552671"],
    ["EVP", "123E4567-E89B-42D3-A456-426614174000"],
    ["EVP", "123e4567e89b42d3a456426614174000"],
    ["EVP", "ada@example.com"],
  ] as const)("refuses a %s key %s naming pix.key", (keyType, key) => {
    expect(() => parsePixKey({ keyType, key })).toThrow(new RegExp(`^pix\\.key must be .* for keyType ${keyType}$`));
  });

  it("masks every key type; a CPF as ***.456.789-** and never whole", () => {
    expect(maskedPixKey({ keyType: "CPF", key: "52998224725" })).toBe("***.982.247-**");
    expect(maskedPixKey({ keyType: "CNPJ", key: "11222333000181" })).toBe("****0181");
    expect(maskedPixKey({ keyType: "EMAIL", key: "ada@example.com" })).toBe("a***@example.com");
    expect(maskedPixKey({ keyType: "PHONE", key: "+5511987654321" })).toBe("+55*******4321");
    expect(maskedPixKey({ keyType: "EVP", key: "123e4567-e89b-42d3-a456-426614174000" })).toBe("****4000");
  });
});
