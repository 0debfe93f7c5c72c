" OpenProse programs: *.prose files get the `prose` filetype.
autocmd BufRead,BufNewFile *.prose setfiletype prose
