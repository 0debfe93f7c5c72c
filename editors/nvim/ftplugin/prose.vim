" OpenProse buffer settings: the canonical form indents by two spaces; `#` starts a comment;
" names may contain hyphens (`follow-up`), so `w`, `*` and completion treat them as one word.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal expandtab shiftwidth=2 softtabstop=2 tabstop=8
setlocal commentstring=#\ %s comments=:#
setlocal iskeyword+=-
setlocal formatoptions-=t formatoptions+=croql

let b:undo_ftplugin = 'setlocal expandtab< shiftwidth< softtabstop< tabstop< commentstring<'
      \ . ' comments< iskeyword< formatoptions<'
