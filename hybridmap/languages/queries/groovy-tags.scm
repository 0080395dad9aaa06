; Groovy tags for hybridmap.
; The grammar in tree-sitter-language-pack ("groovy") is shallow: every statement is a `command` made of
; `unit`s, a `{...}` body is a `block`, and a call or a method head is a `func`. Declarations are recognised
; by their keyword, so these patterns key on the identifier text.

; --- definitions ---------------------------------------------------------------

;   `class Name {` (the name opens the block) and `class Name extends/implements ... {`
(command
  (unit . (identifier) @_kw .)
  .
  (block . (unit . (identifier) @name.definition.class .))
  (#eq? @_kw "class")) @definition.class
(command
  (unit . (identifier) @_kw .)
  .
  (unit . (identifier) @name.definition.class .)
  (#eq? @_kw "class")) @definition.class

;   `interface Name {` (the name opens the block) and `interface Name extends/implements ... {`
(command
  (unit . (identifier) @_kw .)
  .
  (block . (unit . (identifier) @name.definition.interface .))
  (#eq? @_kw "interface")) @definition.interface
(command
  (unit . (identifier) @_kw .)
  .
  (unit . (identifier) @name.definition.interface .)
  (#eq? @_kw "interface")) @definition.interface

;   `enum Name {` (the name opens the block) and `enum Name extends/implements ... {`
(command
  (unit . (identifier) @_kw .)
  .
  (block . (unit . (identifier) @name.definition.enum .))
  (#eq? @_kw "enum")) @definition.enum
(command
  (unit . (identifier) @_kw .)
  .
  (unit . (identifier) @name.definition.enum .)
  (#eq? @_kw "enum")) @definition.enum

;   `trait Name {` (the name opens the block) and `trait Name extends/implements ... {`
(command
  (unit . (identifier) @_kw .)
  .
  (block . (unit . (identifier) @name.definition.trait .))
  (#eq? @_kw "trait")) @definition.trait
(command
  (unit . (identifier) @_kw .)
  .
  (unit . (identifier) @name.definition.trait .)
  (#eq? @_kw "trait")) @definition.trait


; Top-level functions: `def name(...) {`, `String name(...) {`, `static List<T> name(...) {`.
(source_file
  (command
    (unit . [(identifier) (generics_class)] @_ret .)
    .
    (block . (unit . (func . (identifier) @name.definition.function) .))
    (#not-match? @_ret "^(else|try|finally|do|return|new|class|interface|enum|trait)$")) @definition.function)

; Methods and constructors: the same shape directly inside a class body.
(block
  (command
    (unit . [(identifier) (generics_class)] @_ret .)
    .
    (block . (unit . (func . (identifier) @name.definition.method) .))
    (#not-match? @_ret "^(else|try|finally|do|return|new|class|interface|enum|trait)$")) @definition.method)

; Abstract methods of an interface: `BigDecimal total()` (no body).
(command
  (unit . (identifier) @_kw .)
  .
  (block
    (command
      (unit . [(identifier) (generics_class)] .)
      .
      (unit . (func . (identifier) @name.definition.method) .)
      .) @definition.method)
  (#eq? @_kw "interface"))

; Constructors: `Cart(String name) {` directly inside a class body (no return type before the name).
(block
  (command
    .
    (block . (unit . (func . (identifier) @name.definition.constructor) .))
    (#match? @name.definition.constructor "^[A-Z]")) @definition.constructor)

; Script-level constants: `final int MAX_ITEMS = 10`, `def TAX_RATE = 0.2`.
(source_file
  (command
    (unit . (identifier) @name.definition.constant .)
    .
    (operators) @_op
    (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")
    (#eq? @_op "=")) @definition.constant)

; --- references ----------------------------------------------------------------

; `new Cart(...)` (as a statement, after `=`, or as an argument).
(command
  (unit . (identifier) @_new .)
  .
  (unit . (func . (identifier) @name.reference.class))
  (#eq? @_new "new"))
(arg_block
  (unit . (identifier) @_new .)
  .
  (unit . (func . (identifier) @name.reference.class))
  (#eq? @_new "new"))

; Method calls on a receiver: `cart.add(x)`, `this.validate()`, `Util.helper()`.
(unit (identifier) . (func . (identifier) @name.reference.call)) @reference.call

; Plain calls: a statement `log(x)`, after a keyword/`=` (`return f(x)`, `println f(x)`), or as an argument.
(command . (unit . (func . (identifier) @name.reference.call))) @reference.call
(command
  [(unit . (identifier) @_kw .) (operators)]
  .
  (unit . (func . (identifier) @name.reference.call))
  (#not-eq? @_kw "new")) @reference.call
(arg_block . (unit . (func . (identifier) @name.reference.call))) @reference.call
(arg_block (arg_spliter) . (unit . (func . (identifier) @name.reference.call))) @reference.call

; Inheritance: `extends Base`, `implements A, B`.
(command
  (unit . (identifier) @_kw .)
  .
  (unit . (identifier) @name.reference.class .)
  (#match? @_kw "^(extends|implements)$"))

(command
  (unit . (identifier) @_kw .)
  .
  (block . (unit . (identifier) @name.reference.class .))
  (#match? @_kw "^(extends|implements)$"))
; ... and the further names of `implements A, B, C {`.
(command
  (unit . (identifier) @_kw .)
  (arg_spliter)
  .
  (unit . (identifier) @name.reference.class .)
  (#eq? @_kw "implements"))
(command
  (unit . (identifier) @_kw .)
  (arg_spliter)
  (block . (unit . (identifier) @name.reference.class .))
  (#eq? @_kw "implements"))

; Generic type arguments `List<Item>` and capitalised parameter types `f(Item item)`.
(generics_class generics_type: (identifier) @name.reference.type)
(arg_block
  (unit . (identifier) @name.reference.type .)
  .
  (unit . (identifier) .)
  (#match? @name.reference.type "^[A-Z]"))

; Imports: the last segment of `import a.b.Money` / `import static a.b.C.method`.
((command
   . (unit . (identifier) @_imp .)
   (unit (identifier) @name.reference.module .)
   .)
 (#eq? @_imp "import"))
