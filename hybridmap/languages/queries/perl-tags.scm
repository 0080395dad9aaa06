; Perl tags for hybridmap

; package Foo::Bar;  /  package Foo::Bar { ... }
(package_statement
  name: (package) @name.definition.module) @definition.module

; Perl 5.38 class syntax
(class_statement
  name: (package) @name.definition.class) @definition.class

(method_declaration_statement
  name: (bareword) @name.definition.method) @definition.method

(subroutine_declaration_statement
  name: (bareword) @name.definition.function) @definition.function

; use constant NAME => value;
(use_statement
  module: (package) @_pragma
  (list_expression . (autoquoted_bareword) @name.definition.constant)
  (#eq? @_pragma "constant")) @definition.constant

; our $VERSION = ...; (file-level only)
(source_file
  (expression_statement
    (assignment_expression
      left: (variable_declaration
        variable: (_ (varname) @name.definition.variable)))) @definition.variable)

; references
(use_statement
  module: (package) @name.reference.module
  (#not-match? @name.reference.module "^(strict|warnings|lib|constant|utf8|feature|parent|base|vars|overload|integer|open|bytes|less|sort|version|experimental|v5.*)$")) @reference.module

(use_statement
  module: (package) @_pragma
  (_ (string_content) @name.reference.class)
  (#any-of? @_pragma "parent" "base")) @reference.class

(function_call_expression
  function: (function) @name.reference.call
  (#not-match? @name.reference.call "^(print|printf|say|die|warn|push|pop|shift|unshift|bless|sprintf|join|split|keys|values|each|defined|delete|exists|scalar|ref|open|close|map|grep|sort|reverse|length|substr|lc|uc|chomp)$")) @reference.call

(ambiguous_function_call_expression
  function: (function) @name.reference.call
  (#not-match? @name.reference.call "^(print|printf|say|die|warn|push|pop|shift|unshift|return|bless|sprintf|join|split|keys|values|each|defined|delete|exists|scalar|ref|open|close|map|grep|sort|reverse|length|substr|lc|uc|chomp|local|my|our)$")) @reference.call

(method_call_expression
  method: (method) @name.reference.call) @reference.call

(method_call_expression
  invocant: (bareword) @name.reference.class) @reference.class
