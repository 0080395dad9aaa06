; svelte single-file components: the code blocks, read as TypeScript (see svelte.toml).
; inherits: typescript
