; Common Lisp tags for hybridmap. defun/defmacro/defgeneric/defmethod have their own node;
; the other def forms are lists recognised by their head symbol.
(list_lit (defun (defun_header keyword: (defun_keyword) @_k function_name: (sym_lit) @name.definition.function))
  (#any-of? @_k "defun" "defgeneric")) @definition.function
(list_lit (defun (defun_header keyword: (defun_keyword) @_k function_name: (sym_lit) @name.definition.method))
  (#eq? @_k "defmethod")) @definition.method
(list_lit (defun (defun_header keyword: (defun_keyword) @_k function_name: (sym_lit) @name.definition.macro))
  (#eq? @_k "defmacro")) @definition.macro
(list_lit . (sym_lit) @_d . (sym_lit) @name.definition.constant
  (#match? @_d "(?i)^(defconstant|define-constant)$")) @definition.constant
(list_lit . (sym_lit) @_d . (sym_lit) @name.definition.variable
  (#match? @_d "(?i)^(defvar|defparameter)$")) @definition.variable
(list_lit . (sym_lit) @_d . [(sym_lit) @name.definition.struct (list_lit . (sym_lit) @name.definition.struct)]
  (#match? @_d "(?i)^defstruct$")) @definition.struct
(list_lit . (sym_lit) @_d . (sym_lit) @name.definition.class
  (#match? @_d "(?i)^(defclass|define-condition)$")) @definition.class
(list_lit . (sym_lit) @_d . (kwd_lit (kwd_symbol) @name.definition.module)
  (#match? @_d "(?i)^defpackage$")) @definition.module

; calls (the head of a list, def forms aside), #'fn, and packages used
(list_lit . (sym_lit) @name.reference.call
  (#not-match? @name.reference.call "(?i)^(def.*|in-package|let\\*?|lambda|if|when|unless|cond|progn|setf|quote)$"))
(var_quoting_lit (sym_lit) @name.reference.call)
(list_lit . (kwd_lit (kwd_symbol) @_u) (kwd_lit (kwd_symbol) @name.reference.module) (#eq? @_u "use"))
(list_lit . (sym_lit) @_p . (kwd_lit (kwd_symbol) @name.reference.module) (#match? @_p "(?i)^in-package$"))
