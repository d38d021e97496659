// Lint configuration: recommended JS and TypeScript rules over the whole package.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "**/.hangar/", ".langgraph_api/", "bench/.peer/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["bin/**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
