; Scheme (R7RS and friends) tags for hybridmap: (define (f args) ...) is a function,
; (define x ...) a value; a library is named by its list, e.g. (shop cart).
(list . (symbol) @_d . (list . (symbol) @name.definition.function)
  (#match? @_d "^(define|define\\*|define-public|define-inline)$")) @definition.function
(list . (symbol) @_d . (symbol) @name.definition.variable
  (#match? @_d "^(define|define-public|define-values)$")) @definition.variable
(list . (symbol) @_d . (symbol) @name.definition.macro
  (#match? @_d "^(define-syntax|define-macro|define-syntax-rule)$")) @definition.macro
(list . (symbol) @_d . (symbol) @name.definition.struct
  (#match? @_d "^(define-record-type|define-record)$")) @definition.struct
(list . (symbol) @_d . (list) @name.definition.module
  (#match? @_d "^(define-library|library|define-module)$")) @definition.module

; calls (list heads other than binding and control forms) and imported libraries
(list . (symbol) @name.reference.call
  (#not-match? @name.reference.call "^(define.*|library|import|export|begin|let\\*?|letrec\\*?|lambda|if|cond|case|when|unless|quote|syntax-rules|_)$"))
(list . (symbol) @_i (list) @name.reference.module (#match? @_i "^(import|use-modules)$"))
