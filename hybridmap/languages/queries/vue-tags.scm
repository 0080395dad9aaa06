; vue single-file components: the code blocks, read as TypeScript (see vue.toml).
; inherits: typescript
