/**
 * NATS credentials files as nsc writes them (`nsc generate creds`): the user JWT and the
 * user's NKEY seed, each between BEGIN and END lines, with nsc's warning between them.
 */
import { createAccount, createUser } from "@nats-io/nkeys";
import { userJwt } from "./operator-jwt.ts";

/** The text of a creds file holding `jwt` and `seed`. */
export function credsText(jwt: string, seed: Uint8Array | string): string {
  const seedText = typeof seed === "string" ? seed : new TextDecoder().decode(seed);
  return [
    "-----BEGIN NATS USER JWT-----",
    jwt,
    "------END NATS USER JWT------",
    "",
    "************************* IMPORTANT *************************",
    "NKEY Seed printed below can be used to sign and prove identity.",
    "NKEYs are sensitive and should be treated as secrets.",
    "",
    "-----BEGIN USER NKEY SEED-----",
    seedText,
    "------END USER NKEY SEED------",
    "",
    "*************************************************************",
    "",
  ].join("\n");
}

/** A new user of a new account, with no server: its JWT, its seed and the creds file of both. */
export function newUserCreds(name = "natsmon"): { jwt: string; seed: string; text: string } {
  const user = createUser();
  const jwt = userJwt(createAccount(), user.getPublicKey(), name);
  const seed = new TextDecoder().decode(user.getSeed());
  return { jwt, seed, text: credsText(jwt, seed) };
}

/**
 * Files that are not credentials the NATS client can use, by what is wrong with them, made
 * from a good file's JWT and seed.
 */
export function brokenCreds(creds: { jwt: string; seed: string; text: string }): Record<string, string> {
  const { jwt, seed, text } = creds;
  const jwtBlock = text.slice(0, text.indexOf("------END NATS USER JWT------\n") + 30);
  const seedBlock = text.slice(
    text.indexOf("-----BEGIN USER NKEY SEED-----"),
    text.indexOf("SEED------\n") + 11,
  );
  return {
    empty: "",
    blank: "\n  \n",
    "a bare JWT": `${jwt}\n`,
    "a bare seed": `${seed}\n`,
    garbage: "user: natsmon\npassword: s3cret\n",
    "the JWT block only": jwtBlock,
    "the seed block only": seedBlock,
    "the blocks swapped": `${seedBlock}\n${jwtBlock}`,
    "a seed with a wrong checksum": credsText(
      jwt,
      `${seed.slice(0, -2)}${seed.endsWith("AA") ? "AB" : "AA"}`,
    ),
    "a seed with a character base32 has not": credsText(jwt, `${seed.slice(0, 10)}!${seed.slice(11)}`),
    "Windows line endings": text.replaceAll("\n", "\r\n"),
    "no line break after the seed block's END line": `${jwtBlock}\n${seedBlock.trimEnd()}`,
  };
}
