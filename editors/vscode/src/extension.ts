// The msgaudit extension: starts `msgaudit server` for Rust and YAML files and
// hands it the settings. Everything else (diagnostics, hover, code actions) is the
// server's, through vscode-languageclient.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("msgaudit");
  const command = config.get<string>("path", "msgaudit");
  const serverOptions: ServerOptions = { command, args: ["server"] };
  const rulesUrl = config.get<string>("rulesUrl", "");
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "rust" },
      { scheme: "file", language: "yaml" },
    ],
    initializationOptions: {
      debounceMs: config.get<number>("debounceMs", 200),
      ...(rulesUrl ? { rulesUrl } : {}),
    },
  };
  client = new LanguageClient("msgaudit", "msgaudit", serverOptions, clientOptions);
  await client.start();
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
