; Racket tags for hybridmap: (define (f args) ...) is a function, (define x ...) a value.
(list . (symbol) @_d . (list . (symbol) @name.definition.method)
  (#match? @_d "^define/(public|private|override|augment|pubment|overment|public-final)$")) @definition.method
(list . (symbol) @_d . (list . (symbol) @name.definition.function)
  (#match? @_d "^(define|define/contract)$")) @definition.function
(list . (symbol) @_d . (symbol) @name.definition.variable
  (#match? @_d "^(define|define/[a-z-]+)$")) @definition.variable
(list . (symbol) @_d . [(symbol) @name.definition.macro (list . (symbol) @name.definition.macro)]
  (#match? @_d "^(define-syntax|define-syntax-rule|define-simple-macro|define-syntax-parser)$")) @definition.macro
(list . (symbol) @_d . (symbol) @name.definition.struct
  (#match? @_d "^(struct|define-struct)$")) @definition.struct
(list . (symbol) @_d . (symbol) @name.definition.module
  (#match? @_d "^(module|module\\*|module\\+)$")) @definition.module

; calls: list heads other than the binding forms; required modules
(list . (symbol) @name.reference.call
  (#not-match? @name.reference.call "^(define.*|struct|module.*|require|provide|let\\*?|letrec|lambda|λ|if|cond|when|unless|begin|quote|for.*)$"))
(list . (symbol) @_r [(symbol) (string)] @name.reference.module (#eq? @_r "require"))
