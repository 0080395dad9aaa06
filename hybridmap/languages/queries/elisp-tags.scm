; Emacs Lisp tags for hybridmap

(function_definition name: (symbol) @name.definition.function) @definition.function
(macro_definition name: (symbol) @name.definition.macro) @definition.macro

; top-level defconst / defvar only
(source_file
  (special_form "defconst" . (symbol) @name.definition.constant) @definition.constant)
(source_file
  (special_form "defvar" . (symbol) @name.definition.variable) @definition.variable)

(source_file
  (list
    . (symbol) @_def
    . (symbol) @name.definition.variable
    (#any-of? @_def "defcustom" "defvar-local" "defface" "defgroup")) @definition.variable)

(source_file
  (list
    . (symbol) @_def
    . [(symbol) @name.definition.struct
       (list . (symbol) @name.definition.struct)]
    (#any-of? @_def "cl-defstruct" "defstruct" "defclass" "eieio-defclass")) @definition.struct)

(source_file
  (list
    . (symbol) @_def
    . (symbol) @name.definition.function
    (#any-of? @_def "cl-defun" "cl-defgeneric" "defalias" "define-inline" "cl-defsubst"
                    "define-derived-mode" "define-minor-mode" "define-globalized-minor-mode")) @definition.function)

(source_file
  (list
    . (symbol) @_def
    . (symbol) @name.definition.method
    (#eq? @_def "cl-defmethod")) @definition.method)

(source_file
  (list
    . (symbol) @_def
    . (symbol) @name.definition.macro
    (#eq? @_def "cl-defmacro")) @definition.macro)

; references
(list
  . (symbol) @_req
  . (quote (symbol) @name.reference.module)
  (#any-of? @_req "require" "load-library")) @reference.module

; calls: package-prefixed function heads (Elisp's naming convention),
; which skips special forms, builtins and argument lists
(list
  . (symbol) @name.reference.call
  (#match? @name.reference.call "[-/]")
  (#not-match? @name.reference.call "^(cl-def|def|with-|save-|add-hook|eval-|declare-|make-local|string-|buffer-|line-|point-|current-|set-|cl-lib|run-hook|should)")) @reference.call

; #'fn
(quote "#'" (symbol) @name.reference.call) @reference.call
