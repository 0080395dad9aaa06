; astro single-file components: the code blocks, read as TypeScript (see astro.toml).
; inherits: typescript
