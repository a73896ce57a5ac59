/** The bridge client: no `vscode` import, embeddable in any Node host. */
export * from "./bridgeClient";
