# Prints, one per line, the matches zsh's completion system offers for a command line, by typing
# it into an interactive zsh on a pseudo-terminal and pressing TAB.
# Usage: zsh complete.zsh DIRECTORY_WITH__gua 'gua report --'
zmodload zsh/zpty || exit 2
rc=$(mktemp) || exit 2
cat >$rc <<'RC'
PS1='' RPS1=''
autoload -Uz compinit && compinit -u -D
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
# Every match added is also printed, marked; the shell exits once the completion has run.
compadd() {
    local -a gua_hits
    builtin compadd -O gua_hits "$@"
    local hit
    for hit in $gua_hits; do
        print -r -- $'\n<<gua-match>>'"$hit"
    done
    builtin compadd "$@"
}
comppostfuncs=(exit)
RC
zpty gua_z zsh -f -i
zpty -w gua_z "fpath=(${(q)1} \$fpath); source ${(q)rc}"
zpty -w -n gua_z "$2"$'\t'
out=
while zpty -r gua_z chunk; do
    out+=$chunk
done
rm -f $rc
for line in ${(f)out//$'\r'/}; do
    [[ $line == '<<gua-match>>'* ]] && print -r -- ${line#'<<gua-match>>'}
done
exit 0
